#!/bin/sh
# git-fuzz scenario: switch HEAD on a branch: git names the branch HEAD resolves to
#@ command: switch HEAD
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && git add f && git commit -q -m one

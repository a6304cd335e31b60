#!/bin/sh
# git-fuzz scenario: status: an intent-to-add file that is gone shows as deleted
#@ command: status --porcelain=v2
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && git add f && git commit -q -m one
echo new >n && git add -N n && rm n

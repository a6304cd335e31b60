#!/bin/sh
# git-fuzz scenario: checkout -m: an intent-to-add entry is a staged change (git refuses to merge)
#@ command: checkout -m b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && git add f && git commit -q -m one
git switch -q -c b && echo two >f && git commit -q -a -m two && git switch -q main
echo local >f
echo new >n && git add -N n

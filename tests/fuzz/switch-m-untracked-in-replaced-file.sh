#!/bin/sh
# git-fuzz scenario: switch -m: a tracked file replaced by a directory holding an untracked file (git refuses; git-par deleted the file)
#@ command: switch -m b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >d && echo keep >k && git add . && git commit -q -m one
git switch -q -c b && echo two >d && git commit -q -a -m two && git switch -q main
rm d && mkdir d && echo precious >d/inside

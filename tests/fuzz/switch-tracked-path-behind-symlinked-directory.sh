#!/bin/sh
# git-fuzz scenario: switch: a tracked file behind a leading directory replaced by a symlink to a directory holding it
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
mkdir d && echo one >d/f && echo keep >k && git add . && git commit -q -m one
git switch -q -c b && echo two >d/f && git commit -q -a -m two && git switch -q main
mv d ../elsewhere && ln -s ../elsewhere d

#!/bin/sh
# git-fuzz scenario: switch: a tracked file behind a leading directory replaced by an untracked file (git: local change; git-par deleted the file)
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
rm -r d && echo precious >d

#!/bin/sh
# git-fuzz scenario: switch --discard-changes: untracked files where the new tree puts a path the index lacks (git protects them, 128)
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
mkdir d && echo one >d/f && echo keep >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r d && echo file >d && git add d && git commit -q -m two && git switch -q main
rm -r d && mkdir d && echo precious >d/untracked

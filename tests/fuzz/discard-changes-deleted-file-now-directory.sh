#!/bin/sh
# git-fuzz scenario: switch --discard-changes: a deleted tracked file whose place holds a directory of untracked files
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >z && echo keep >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q z && git commit -q -m two && git switch -q main
rm z && mkdir z && echo precious >z/inside

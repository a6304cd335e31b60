#!/bin/sh
# git-fuzz scenario: switch: a deleted path whose place holds untracked files is git's directory error, not a local change
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && echo keep >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q f && mkdir f && echo n >f/n && git add f && git commit -q -m two && git switch -q main
rm f && mkdir f && echo precious >f/inside

#!/bin/sh
# git-fuzz scenario: switch -m: a local edit to a file that becomes a directory (git keeps the edit as x~local)
#@ command: switch -m b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
printf 'one\ntwo\n' >x && echo keep >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q x && mkdir x && echo inner >x/y && git add x && git commit -q -m two && git switch -q main
printf 'one\nlocal\n' >x

#!/bin/sh
# git-fuzz scenario: switch refused by git for an untracked file; git-par also names the staged additions under a directory the target turns into a file (a documented difference)
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir s && echo a >s/a && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r s && echo file >s && echo new >n && git add s n && git commit -q -m two && git switch -q main
echo e >s/e && git add s/e && echo untracked >n

#!/bin/sh
# git-fuzz scenario: switch: an untracked file where a deletion already staged is (git refuses: would be removed)
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo a >a && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q a && git commit -q -m two && git switch -q main
git rm -q --cached a

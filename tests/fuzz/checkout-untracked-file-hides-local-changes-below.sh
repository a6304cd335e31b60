#!/bin/sh
# git-fuzz scenario: checkout: an untracked file where a new file goes hides the local change of the tracked directory it replaced
#@ command: checkout -b new b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir d && echo f >d/f && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r d && echo file >d && git add d && git commit -q -m two && git switch -q main
rm -r d && echo local >d

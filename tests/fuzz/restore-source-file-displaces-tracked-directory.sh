#!/bin/sh
# git-fuzz scenario: restore --source REV where REV has a file where the index has a directory: the tracked paths below it are gone before the pathspecs match (git: did not match; git-par restored and lost the edit)
#@ command: restore --source b f/x f
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir f && echo one >f/x && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r f && echo file >f && git add f && git commit -q -m two && git switch -q main
echo edited >f/x

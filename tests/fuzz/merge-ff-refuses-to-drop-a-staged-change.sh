#!/bin/sh
# git-fuzz scenario: merge --ff-only: a staged addition under a directory the target turns into a file (git drops it; git-par refuses: a documented difference)
#@ command: merge --ff-only b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir D && echo f >D/f && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r D && echo file >D && git add D && git commit -q -m two && git switch -q main
echo new >D/b && git add D/b

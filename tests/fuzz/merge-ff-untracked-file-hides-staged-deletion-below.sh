#!/bin/sh
# git-fuzz scenario: merge --ff-only: an untracked symlink where a new file goes, over a directory whose file's deletion is staged (git: overwritten, and nothing below it)
#@ command: merge --ff-only b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir e && echo a >e/a && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r e && echo file >e && git add e && git commit -q -m two && git switch -q main
git rm -q e/a && ln -s ../outside e

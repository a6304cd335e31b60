#!/bin/sh
# git-fuzz scenario: checkout: a new file where a directory holds tracked files and an intent-to-add one (git: the tracked entries first, a local change)
#@ command: checkout --detach b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir -p D/E && echo b >D/E/b && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r D && mkdir D && echo file >D/E && git add D && git commit -q -m two && git switch -q main
echo local >D/E/q && git add -N D/E/q && echo untracked >D/E/u

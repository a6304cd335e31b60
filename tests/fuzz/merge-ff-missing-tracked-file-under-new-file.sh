#!/bin/sh
# git-fuzz scenario: merge --ff-only: a new file where a directory holds a deleted tracked file and an untracked one (git: the directory error; a missing file is up to date)
#@ command: merge --ff-only b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir v && echo b >v/b && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r v && echo file >v && git add v && git commit -q -m two && git switch -q main
rm v/b && echo untracked >v/u

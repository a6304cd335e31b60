#!/bin/sh
# git-fuzz scenario: reset --hard: a skip-worktree entry whose directory became an untracked file is not up to date (git refuses; git-par deleted the file)
#@ command: reset --hard b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir -p f/q && echo one >f/q/e && echo k >k && git add . && git commit -q -m one
git switch -q -c b && echo two >f/q/e && git commit -q -a -m two && git switch -q main
git update-index --skip-worktree f/q/e && rm -r f/q && echo precious >f/q

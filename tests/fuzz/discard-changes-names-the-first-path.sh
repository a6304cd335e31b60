#!/bin/sh
# git-fuzz scenario: switch --discard-changes: git names the first refused path only (an untracked file before a changed skip-worktree entry)
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo y >y && echo k >k && git add . && git commit -q -m one
git switch -q -c b && echo new >n && echo y2 >y && git add . && git commit -q -m two && git switch -q main
git update-index --skip-worktree y && echo changed >y
echo untracked >n

#!/bin/sh
# git-fuzz scenario: restore --source REV: a tree entry that differs from a skip-worktree entry replaces it
#@ command: restore --source b x
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >x && echo two >y && git add . && git commit -q -m one
git switch -q -c b && echo three >x && git commit -q -a -m two && git switch -q main
git update-index --skip-worktree x && rm x

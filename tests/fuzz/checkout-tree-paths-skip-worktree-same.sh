#!/bin/sh
# git-fuzz scenario: checkout REV -- PATH: a tree entry equal to a skip-worktree entry leaves it alone
#@ command: checkout b -- x
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >x && echo two >y && git add . && git commit -q -m one
git branch b
git update-index --skip-worktree x && echo local >x

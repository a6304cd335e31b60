#!/bin/sh
# git-fuzz scenario: checkout -- PATH: a skip-worktree entry takes no part in the pathspec (git: did not match)
#@ command: checkout -- x
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >x && echo two >y && git add . && git commit -q -m one
git update-index --skip-worktree x && rm x

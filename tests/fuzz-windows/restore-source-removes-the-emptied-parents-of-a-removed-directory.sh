#!/bin/sh
# git-fuzz scenario: restore --source: a file two directories down goes; both emptied directories go too (git-par.exe left the upper one: another handle held the lower one, delete-pending)
#@ command: restore --staged --worktree --source c y.bin/x.txt
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=1 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
git config core.symlinks false
git config core.filemode false
git config core.checkStat minimal
echo a >a && mkdir -p y.bin/x.txt && echo b >y.bin/x.txt/b
git add . && git commit -q -m a
git switch -q -c c && git rm -q -r y.bin && echo file >y.bin && git add y.bin && git commit -q -m c
git switch -q main

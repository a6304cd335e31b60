#!/bin/sh
# git-fuzz scenario: sparse-checkout set that turns the sparse checkout on: skip-worktree entries present on disk stay (git read the index before)
#@ command: sparse-checkout set --no-cone /*.txt
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
ln -s /dev/null z && echo a >a.txt && echo b >b && echo c >c && git add . && git commit -q -m a
git update-index --skip-worktree z b

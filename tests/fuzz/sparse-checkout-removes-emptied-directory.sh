#!/bin/sh
# git-fuzz scenario: sparse-checkout set: the directory of an entry that leaves the patterns, its file already gone, is removed when empty
#@ command: sparse-checkout set --no-cone /*.txt
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir y && echo e >y/E && echo t >a.txt && git add . && git commit -q -m one
rm y/E

#!/bin/sh
# git-fuzz scenario: reset --hard with an entry inside the sparse patterns marked skip-worktree and a symlink in the place of its directory: git replaces the symlink (never writing through it) and writes the entry, no "already present" warning
#@ command: reset --hard
#@ cwd: repo
#@ observe: .
#@ git-par: direct
set -e
mkdir outside
git init -q -b main repo
cd repo
mkdir -p s/f && echo e >s/f/e && echo t >top && git add . && git commit -q -m one
git sparse-checkout set s
git update-index --skip-worktree s/f/e
rm -r s/f && ln -s ../../outside s/f

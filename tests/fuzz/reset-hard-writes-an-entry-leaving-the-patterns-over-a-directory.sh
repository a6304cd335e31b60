#!/bin/sh
# git-fuzz scenario: reset --hard where a tracked file outside the sparse patterns (its skip-worktree bit cleared) has a directory in its place: git keeps the entry in the work tree, clears the directory and writes the file
#@ command: reset --hard
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo a >d && echo b >e && git add . && git commit -q -m one
git sparse-checkout set --no-cone d/
git update-index --no-skip-worktree d
rm -f d && mkdir d && echo x >d/inside

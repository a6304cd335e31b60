#!/bin/sh
# git-fuzz scenario: reset --hard with the non-cone pattern `d/` and a directory in the place of the tracked file d: git takes the type from the disk (its ce_to_dtype finds none), so `d/` matches d, which stays in the work tree: the directory is cleared and the file written
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

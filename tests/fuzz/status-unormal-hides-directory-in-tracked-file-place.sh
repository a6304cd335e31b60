#!/bin/sh
# git-fuzz scenario: status -unormal where a directory replaced a tracked skip-worktree file: git's index_name_is_other hides `d/e/`, since the index has d/e
#@ command: status -s
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir d && echo a >d/e && echo b >f && git add . && git commit -q -m one
git update-index --skip-worktree d/e && rm d/e && mkdir d/e && echo x >d/e/inside

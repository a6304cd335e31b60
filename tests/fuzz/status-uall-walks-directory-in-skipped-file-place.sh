#!/bin/sh
# git-fuzz scenario: status -uall where a directory replaced a tracked skip-worktree file: git walks it and lists the untracked file inside (and -unormal lists nothing for it, as git's index_name_is_other has it)
#@ command: status -s -uall
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir d && echo a >d/e && echo b >f && git add . && git commit -q -m one
git update-index --skip-worktree d/e && rm d/e && mkdir d/e && echo x >d/e/inside

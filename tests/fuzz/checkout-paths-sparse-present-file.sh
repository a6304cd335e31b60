#!/bin/sh
# git-fuzz scenario: checkout -- PATH in a sparse checkout: a skip-worktree file the user brought back is an ordinary entry again (git's index read clears the bit)
#@ command: checkout -- y/b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir f y && echo f >f/f && printf 'eps 9\n' >y/b && git add . && git commit -q -m one
git sparse-checkout set f
mkdir -p y && printf 'eps 9\r\n' >y/b

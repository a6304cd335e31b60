#!/bin/sh
# git-fuzz scenario: status -uno --ignored: git collects ignored files only along with untracked ones, so none is listed
#@ command: status --porcelain=v2 -uno --ignored
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo '*.log' >.gitignore && echo a >a && git add . && git commit -q -m one
echo x >x.log && echo b >a && echo u >u

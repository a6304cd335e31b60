#!/bin/sh
# git-fuzz scenario: sparse-checkout set: an entry leaving the cone whose directory became an untracked file is not up to date (git warns and keeps it)
#@ command: sparse-checkout set a
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir a s && echo a >a/f && echo s >s/a && git add . && git commit -q -m one
rm -r s && echo local >s

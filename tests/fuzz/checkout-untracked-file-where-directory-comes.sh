#!/bin/sh
# git-fuzz scenario: checkout: an untracked file at a staged deletion that becomes a directory (git: removed, and nothing below it)
#@ command: checkout b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo a >a && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q a && mkdir a && echo x >a/x && git add a && git commit -q -m two && git switch -q main
git rm -q --cached a

#!/bin/sh
# git-fuzz scenario: switch to a branch with a new directory inside a read-only one: git writes the entries before it in index order, then dies ("cannot create directory at"); the index and HEAD stay
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir x && echo a >x/a && echo z >z && git add . && git commit -q -m one
git switch -q -c b
mkdir x/n && echo f >x/n/f && echo z2 >z && echo zero >0 && git add . && git commit -q -m two
git switch -q main
chmod 555 x

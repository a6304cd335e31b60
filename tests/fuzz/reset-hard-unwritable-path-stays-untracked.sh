#!/bin/sh
# git-fuzz scenario: reset --hard that cannot write into a read-only directory: git dies before it writes the index, so a new path is no staged addition afterwards
#@ command: reset --hard b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir d && echo one >d/f && echo k >k && git add . && git commit -q -m one
git switch -q -c b && echo two >d/f && echo new >d/new && git add . && git commit -q -m two && git switch -q main
chmod 555 d

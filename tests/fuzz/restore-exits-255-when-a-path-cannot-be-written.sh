#!/bin/sh
# git-fuzz scenario: restore that cannot write a path (its directory read-only): git's checkout_paths returns -1, exit status 255
#@ command: restore --source b .
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir d && echo one >d/f && echo k >k && git add . && git commit -q -m one
git switch -q -c b && echo two >d/f && git commit -q -a -m two && git switch -q main
rm d/f && chmod 555 d

#!/bin/sh
# git-fuzz scenario: switch: a staged change under a directory the target turns into a file (git drops it; git-par refuses and changes nothing: a documented difference)
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir d && echo one >d/f && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q -r d && echo file >d && git add d && git commit -q -m two && git switch -q main
echo staged >d/f && git add d/f

#!/bin/sh
# git-fuzz scenario: sparse-checkout reapply with a symlink where a directory outside the cone was: git deletes the files it leads to (outside the work tree); git-par leaves the link and them (a documented difference)
#@ command: sparse-checkout reapply
#@ cwd: repo
#@ observe: repo outside
#@ git-par: direct
set -e
mkdir outside && echo precious >outside/file
git init -q -b main repo
cd repo
mkdir a d && echo f >a/f && echo x >d/x && git add . && git commit -q -m one
git sparse-checkout set a
ln -s ../outside d

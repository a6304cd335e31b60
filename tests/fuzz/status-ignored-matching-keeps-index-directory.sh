#!/bin/sh
# git-fuzz scenario: status --ignored=matching: a directory the index has entries in is not folded into one untracked entry
#@ command: status --porcelain --ignored=matching
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
mkdir -p A/x && echo t >A/x/y && echo k >k && echo '*.log' >.gitignore && git add . && git commit -q -m one
rm -r A/x && echo untracked >A/x

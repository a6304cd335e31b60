#!/bin/sh
# git-fuzz scenario: checkout . with a blob missing from the object database: git reports the path, writes the rest and exits 255 (checkout_paths returns -1)
#@ command: checkout .
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo a >a && echo b >b && git add . && git commit -q -m one
blob=$(git rev-parse :a)
rm .git/objects/$(echo $blob | cut -c1-2)/$(echo $blob | cut -c3-)
rm a b

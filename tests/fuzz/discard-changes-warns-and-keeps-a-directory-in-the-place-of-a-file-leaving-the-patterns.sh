#!/bin/sh
# git-fuzz scenario: switch --discard-changes where a tracked file leaving the sparse patterns (the target has a directory of that name, also outside them) has a directory holding an untracked file in its place: git does not refuse (the entry leaves the patterns, so its place is not checked for untracked files), warns that the path is not up to date and that it cannot unlink it, keeps the directory and switches (seed 345)
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
set -e
git init -q -b main repo
cd repo
printf 'w\n' >w.id
printf 'x\n' >x.txt
touch -d '2001-02-03 04:05:06' x.txt
git add -A -f . && git commit -q -m a
git switch -q -c b
rm w.id
mkdir w.id
printf 'in b\n' >w.id/x.txt
git add -A -f . && git commit -q -m b
git switch -q main
set +e
git sparse-checkout set --no-cone '/*.txt'
mkdir w.id
printf 'local\n' >w.id/inside
true

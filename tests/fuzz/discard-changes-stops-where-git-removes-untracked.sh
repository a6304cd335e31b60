#!/bin/sh
# git-fuzz scenario: switch --discard-changes where git reports untracked files in the way and removes them all the same: git-par stops at that error (a documented safer refusal) (seed 17855)
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=1 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
printf '*.o\n' >.gitignore
ln -s nowhere A
mkdir -p F
ln -s nowhere F/b
mkdir -p b
printf 'delta 1\neps 7\neta 5\n' >b/x.txt
mkdir -p d/E
: >d/E/n.lf
mkdir -p f/x.txt
printf 'delta 0\ngamma 9\n' >f/x.txt/q.log
mkdir -p v.log/E
printf 'delta 0\ndelta 8\n' >v.log/E/x.txt
chmod +x v.log/E/x.txt
seq 55 2779 >w.id
mkdir -p 'é'
printf 'theta 7\015\nbeta 4\015\ndelta 5\015\nalpha 7\015\neps 1\015\n' >'é/x.txt'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf 'é/x.txt'
rm -rf 'é'
printf '\315T\027\000' >'é'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
git sparse-checkout set d/E
rm -rf v.log/E/x.txt
git update-index --skip-worktree w.id 2>/dev/null
seq 55 2881 >w.id
mkdir -p v.log
printf 'local theta 0\n' >v.log/x.txt
git add --sparse -f v.log/x.txt
git rm --sparse -q -r -f w.id 2>/dev/null
mkdir -p 'é'
printf 'local beta 6\n' >'é/a'
mkdir -p 'é'
printf 'local theta 5\n' >'é/é'
true

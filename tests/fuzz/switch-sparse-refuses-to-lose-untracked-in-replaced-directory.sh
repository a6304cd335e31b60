#!/bin/sh
# git-fuzz scenario: switch with a sparse checkout on, a tracked directory turned file holding an untracked file: git deletes it, git-par refuses as git does without sparse checkout (a documented safer refusal) (seed 15545)
#@ command: checkout --detach b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=8 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
git config core.autocrlf true
printf '*.bin -text\nd/** -text\n' >.gitattributes
mkdir -p A
printf 'delta 6\nalpha 0\nalpha 7\nzeta 2\n' >A/E
printf 'eta 2\ndelta 9\neps 2\ngamma 6\nalpha 1\n' >D
seq 5 6087 >a
printf 'eta 1\015\n$Id$\015\neps 1\015\n' >f
seq 79 29332 >'s p'
printf 'gamma 7\nalpha 8\nzeta 4\neps 8\nzeta 2\neps 8\nalpha 1' >v.log
mkdir -p 'é/a'
ln -s ../../D 'é/a/é'
mkdir -p 'é'
printf 'eps 1' >'é/x.txt'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf D
rm -rf 'é/a/é'
ln -s nowhere D
seq 5 6501 >a
rm -rf 'é/a'
mkdir -p 'é'
printf 'zeta 9\ngamma 3\n' >'é/a'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q -c c main
rm -rf D
ln -s ../outside D
git add -A -f . && git commit -q --allow-empty -m c
git switch -q main
set +e
git sparse-checkout set --no-cone '/*'
mkdir -p 'é/a'
printf 'local alpha 8\n' >'é/a/e'
true

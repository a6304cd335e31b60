#!/bin/sh
# git-fuzz scenario: switch where the target's file, left out by the sparse patterns, replaces a directory holding an intent-to-add entry: git leaves the file out of its index, git-par refuses (a documented safer refusal) (seed 2250)
#@ command: checkout --detach b
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
mkdir -p A
printf 'eta 5\nalpha 5\ngamma 6\nalpha 0\ngamma 4\neps 3\n' >A/a
printf 'eta 4\ngamma 2\neta 8\n$Id$\ngamma 9\n' >D
chmod +x D
mkdir -p F
printf 'theta 6\ngamma 0\nalpha 5\nzeta 7\ndelta 1\neps 3\neps 0\n' >'F/é'
mkdir -p a
printf 'os"@\275E\033\327[\315\000' >a/e
chmod +x a/e
printf 'zeta 6\015\ngamma 0\015\nbeta 3\015\neta 2\015\ngamma 1\015\n' >'s p'
printf 'delta 2\ndelta 1\neta 5\ngamma 0\n' >v.log
chmod +x v.log
mkdir -p x.txt
: >x.txt/E
chmod +x x.txt/E
mkdir -p 'é/x.txt'
printf 'delta 8\ntheta 2' >'é/x.txt/f'
chmod +x 'é/x.txt/f'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf 'é/x.txt/f'
mkdir -p F
printf 'theta 6\ngamma 0\nalpha 5\nzeta 7\ndelta 1\neta 6\neps 0\n' >'F/é'
rm -rf 'é'
: >'é'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
git sparse-checkout set --no-cone '!a'
rm -rf A
printf 'local gamma 3\n' >A
mkdir -p 'é'
printf 'local eta 9\n' >'é/b'
git add --sparse -f -N 'é/b'
rm -rf 'é/x.txt'
mkdir -p 'é'
ln -s nowhere 'é/x.txt'
true

#!/bin/sh
# git-fuzz scenario: checkout -f where a file leaving the sparse patterns has a directory holding an untracked file in its place: git warns that it cannot unlink it and keeps the directory (seed 1711)
#@ command: checkout -f HEAD
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
set -e
git init -q -b main repo
cd repo
printf 'zeta 0\ngamma 9\ntheta 1\neta 4\neta 6\nzeta 7\n' >D
mkdir -p b
printf 'delta 6\ntheta 7\n' >b/a
mkdir -p 's p'
printf 'delta 0\015\ntheta 3\015\ndelta 1\015\ntheta 3\015\ngamma 2\015\neps 1\015\nbeta 6\015\ntheta 8\015\n' >'s p/b'
printf 'eps 0\neps 1\ntheta 9\ngamma 4\nbeta 0\neps 4\neps 7\neps 0\n' >x.txt
mkdir -p y.bin
printf 'theta 2\ngamma 6\neps 8\neps 6\nzeta 7\nalpha 4\ndelta 2\n' >y.bin/x.txt
chmod +x y.bin/x.txt
git add -A -f . && git commit -q -m a
git switch -q -c b
mkdir -p b
printf 'delta 6\ngamma 9\n' >b/a
printf 'eps 0\neps 1\ntheta 9\ngamma 4\nbeta 0\neps 4\nzeta 3\neps 0\n' >x.txt
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
git sparse-checkout set --no-cone '/*.txt'
printf 'eps 0\neps 1\ntheta 9\ngamma 4\nbeta 0\neps 4\neps 7\neps 0' >x.txt
rm -rf 's p/b' && mkdir 's p/b'
mkdir -p 's p/b'
printf 'local gamma 2\n' >'s p/b/inside'
touch -h -d '2001-02-03 04:05:06' b/a 2>/dev/null
true

#!/bin/sh
# git-fuzz scenario: switch where the target brings entries below a staged file, left out by the sparse patterns: git drops the staged file, git-par refuses and never records both a and a/E (a documented safer refusal) (seed 3839)
#@ command: checkout --detach b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
git config core.autocrlf true
mkdir -p y.bin
: >y.bin/a
mkdir -p 'é/x.txt'
printf 'delta 9\nzeta 3\nalpha 4\ngamma 0\ngamma 3\nbeta 1\nalpha 0\nalpha 1\n' >'é/x.txt/f'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf y.bin/a
mkdir -p a
seq 52 25078 >a/E
chmod +x a/E
mkdir -p y.bin/a
ln -s /dev/null y.bin/a/f
mkdir -p 'é/x.txt'
printf 'delta 9\nzeta 3\nalpha 4\ngamma 3\nbeta 1\nalpha 0\nalpha 1\n' >'é/x.txt/f'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
git sparse-checkout set --no-cone '!a'
printf 'local alpha 7\n' >a
git add --sparse -f -N a
true

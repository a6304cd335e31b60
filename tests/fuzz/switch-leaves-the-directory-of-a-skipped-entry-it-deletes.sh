#!/bin/sh
# git-fuzz scenario: switch --discard-changes deleting an entry that was outside the sparse patterns already: git does not touch the work tree for it, so the empty directory it was in stays (seed 16406)
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
printf 'tmp*\n*.o\n' >.gitignore
seq 21 13857 >A
mkdir -p F
ln -s .. F/q.log
ln -s w.id b
ln -s nowhere w.id
mkdir -p 'é'
printf 'alpha 2\nbeta 8\ndelta 1\neps 2\neta 6' >'é/q.log'
mkdir -p 'é'
printf '\332\034\270\333\266I\375V\336D/\350\314\350Z\000' >'é/x.txt'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf w.id
rm -rf 'é/q.log'
rm -rf 'é/x.txt'
seq 21 14047 >A
mkdir -p 'é'
ln -s ../F 'é/q.log'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q -c c main
rm -rf w.id
rm -rf 'é/q.log'
rm -rf 'é/x.txt'
mkdir -p f
printf 'eta 5\nzeta 8\ntheta 1\ntheta 3\ngamma 4\neta 7\neta 5\n' >f/x.txt
mkdir -p 'é/q.log'
printf 'eta 4\neps 2\ntheta 1\ntheta 2\nalpha 4\n' >'é/q.log/f'
git add -A -f . && git commit -q --allow-empty -m c
git switch -q main
set +e
git sparse-checkout set F
rm -rf 'é/x.txt' && mkdir 'é/x.txt'
mkdir -p 'é/x.txt'
printf 'local eta 1\n' >'é/x.txt/inside'
seq 21 13961 >A
git add --sparse -f A
printf 'local gamma 1\n' >a
git update-index --skip-worktree 'é/x.txt' 2>/dev/null
rm -rf 'é/x.txt'
true

#!/bin/sh
# git-fuzz scenario: merge --ff-only deleting a skip-worktree entry without a sparse checkout: git's removal (of a file already gone) still schedules its directory, which goes once empty (seed 769)
#@ command: merge --ff-only b
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
git config core.eol crlf
printf '*.bin -text\n*.lf eol=lf\n*.crlf text eol=crlf\n' >.gitattributes
printf '*.log\n' >.gitignore
printf 'beta 6\nbeta 1\n' >f
mkdir -p 's p'
printf 'theta 2\n' >'s p/n.lf'
mkdir -p v.log
ln -s nowhere v.log/a
mkdir -p w.id
printf 'alpha 4\ntheta 0\nalpha 3\nalpha 7\nbeta 9\neps 2\n' >w.id/E
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf f
rm -rf 's p/n.lf'
rm -rf w.id/E
mkdir -p w.id/E
printf '\272]\246\000' >w.id/E/q.log
mkdir -p 'é'
printf 'theta 2\n' >'é/é'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q -c c main
mkdir -p A/q.log
printf 'alpha 2\neps 4\nbeta 7\neps 3\nbeta 0\ntheta 7\neta 2\ntheta 7' >'A/q.log/é'
mkdir -p 's p'
printf 'gamma 9\neps 6\nalpha 3\ngamma 3\nalpha 8\n' >'s p/n.lf'
git add -A -f . && git commit -q --allow-empty -m c
git switch -q main
set +e
git update-index --skip-worktree 's p/n.lf' 2>/dev/null
rm -rf 's p/n.lf'
printf 'local theta 1\n' >x.txt
git add --sparse -f x.txt
rm -rf f
git update-index --skip-worktree x.txt 2>/dev/null
rm -rf x.txt
rm -rf v.log
printf 'local gamma 9\n' >v.log
true

#!/bin/sh
# git-fuzz scenario: sparse-checkout disable where an entry cannot be written (its directory read-only): git dies and rolls its index lock back, the skip-worktree bit stays (seed 17793)
#@ command: sparse-checkout disable
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
git config core.autocrlf true
printf 'beta 9\ndelta 1\nzeta 2\nzeta 3\ndelta 1\ntheta 0\ndelta 0\n' >F
mkdir -p a/E
printf 'beta 8\nalpha 0\ngamma 5\ntheta 7\nalpha 4\n' >a/E/b
mkdir -p v.log
printf 'gamma 1\nbeta 3\n' >v.log/x.txt
ln -s ../outside w.id
git add -A -f . && git commit -q -m a
git switch -q -c b
printf 'beta 9\ndelta 1\nzeta 2\nzeta 3\ndelta 1\nzeta 7\ndelta 0\n' >F
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
mkdir -p D
printf 'local delta 0\n' >D/n.lf
git add --sparse -f -N D/n.lf
chmod 555 v.log
mkdir -p v.log
printf 'gamma 1\nbeta 3' >v.log/x.txt
git update-index --skip-worktree v.log/x.txt 2>/dev/null
rm -rf v.log/x.txt
mkdir -p f
printf 'local delta 1\n' >f/n.lf
true

#!/bin/sh
# git-fuzz scenario: switch -m where the target's submodule is left out by the sparse patterns: git's list of local changes takes the skip-worktree gitlink as recorded (seed 10927)
#@ command: switch -m b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=1 checkout.thresholdForParallelism=0
set -e
git init -q -b main subrepo
printf 'one\n' >subrepo/s && git -C subrepo add s && git -C subrepo commit -q -m s1 && git -C subrepo tag s1
printf 'two\n' >subrepo/s && git -C subrepo commit -q -a -m s2 && git -C subrepo tag s2
git init -q -b main repo
cd repo
git config core.autocrlf true
printf 'beta 2\ndelta 1\nzeta 2\neta 5\ngamma 5\neps 4\nalpha 1\n' >a
mkdir -p b
seq 82 26521 >b/a
mkdir -p f
printf 'alpha 8\n' >f/x.txt
printf 'eps 1\015\neta 4\015\nbeta 7\015\neps 3\015\ndelta 7\015\ndelta 9\015\n' >v.log
mkdir -p w.id
ln -s ../z.crlf w.id/q.log
mkdir -p z.crlf
printf 'eps 3\ntheta 9\neps 3\nzeta 6\ntheta 0\nbeta 4\nalpha 2\nzeta 6\n' >z.crlf/E
git -c protocol.file.allow=always submodule add -q ../subrepo m
git -C m checkout -q --detach s1 && git add m
git add -A -f . && git commit -q -m a
git switch -q -c b
mkdir -p f
printf 'zeta 7\n' >f/x.txt
git -C m checkout -q --detach s2 && git add m
mkdir -p 's p'
printf 'delta 5\n' >'s p/b'
mkdir -p 'w.id/é'
printf 'theta 8\neta 3\ntheta 9\n' >'w.id/é/q.log'
mkdir -p z.crlf
printf 'eps 3\015\ntheta 9\015\neps 3\015\nzeta 6\015\ntheta 0\015\nalpha 2\015\nzeta 6\015\n' >z.crlf/E
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
git -c protocol.file.allow=always submodule update -q
set +e
git sparse-checkout set --no-cone '!a'
printf 'beta 2\ndelta 1\nzeta 2\neta 5\ngamma 5\nzeta 8\neps 4\nalpha 1\n' >a
git add --sparse -f a
true

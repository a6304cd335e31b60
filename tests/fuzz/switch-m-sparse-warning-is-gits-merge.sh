#!/bin/sh
# git-fuzz scenario: switch -m where a path the sparse patterns leave out is not up to date (a file in its directory's place): git's quiet two-way attempt fails on it and git merges; git-par hands the call to git (seed 17635)
#@ command: switch -m main
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=8 checkout.thresholdForParallelism=0
set -e
git init -q -b main subrepo
printf 'one\n' >subrepo/s && git -C subrepo add s && git -C subrepo commit -q -m s1 && git -C subrepo tag s1
printf 'two\n' >subrepo/s && git -C subrepo commit -q -a -m s2 && git -C subrepo tag s2
git init -q -b main repo
cd repo
git config core.eol crlf
printf 'beta 3\nzeta 1\n' >A
ln -s A D
printf 'delta 7\ntheta 6\n' >'s p'
mkdir -p y.bin
printf 'eta 8\neps 9\neta 4\nzeta 8\neta 5\ngamma 2\neps 6\n' >y.bin/a
mkdir -p 'é'
printf 'delta 3\nzeta 6\nalpha 4\neps 3\nalpha 5\nalpha 9\ngamma 4\neps 0\n' >'é/n.lf'
git -c protocol.file.allow=always submodule add -q ../subrepo m
git -C m checkout -q --detach s1 && git add m
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf y.bin/a
rm -rf 'é/n.lf'
printf 'beta 3\015\nzeta 1\015\n' >A
printf 'delta 7\ntheta 6\neps 5\n' >'s p'
rm -rf y.bin
printf 'eta 5\n' >y.bin
rm -rf 'é'
printf 'eps 1\ngamma 7\n' >'é'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
git -c protocol.file.allow=always submodule update -q
set +e
git sparse-checkout set --no-cone d/
git update-index --skip-worktree D 2>/dev/null
mkdir -p y.bin
printf 'eta 8\neps 9\neta 4\nzeta 8\neta 5\ngamma 2\n' >y.bin/a
git add --sparse -f y.bin/a
rm -rf y.bin
printf 'local eta 0\n' >y.bin
true

#!/bin/sh
# git-fuzz scenario: restore --source b --staged --worktree where the root .gitattributes is the first path written: git unlinks the old file before it looks attributes up and reads the restored one from the index, for itself and every path after it (seed 17161)
#@ command: restore --staged --worktree --source b :/
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=8 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
git config core.eol crlf
printf 'd/** -text\n' >.gitattributes
printf '*.log\n' >.gitignore
printf 'beta 9\ndelta 4\ndelta 0\neta 6\n$Id$\ndelta 8\ntheta 4\nzeta 3\n' >D
mkdir -p F
printf 'zeta 3\015\n' >F/f
mkdir -p a
printf 'zeta 8\nbeta 4\neps 1\neta 2\ngamma 9\n' >a/q.log
chmod +x a/q.log
mkdir -p v.log
: >v.log/f
mkdir -p w.id
printf 'eps 7\ngamma 7\n' >w.id/a
ln -s nowhere x.txt
mkdir -p y.bin
printf 'alpha 4\neps 5\ntheta 2\neta 5\nzeta 7\nzeta 8\n' >y.bin/n.lf
mkdir -p y.bin
seq 18 10790 >y.bin/q.log
chmod +x y.bin/q.log
mkdir -p z.crlf
printf 'delta 0\neps 3\n' >z.crlf/n.lf
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf a/q.log
rm -rf z.crlf/n.lf
printf '* text=auto\n*.crlf text eol=crlf\n' >.gitattributes
rm -rf z.crlf
printf 'delta 6\neps 7\nalpha 6\ndelta 7\neps 7\nbeta 3\n' >z.crlf
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
mkdir -p v.log
printf 'beta 6\015\nalpha 4\015\ntheta 5\015\n' >v.log/f
mkdir -p z.crlf
printf 'local eta 9\n' >'z.crlf/é'
rm -rf x.txt
ln -s y.bin/q.log x.txt
mkdir -p z.crlf
printf 'local alpha 8\n' >z.crlf/a
git add --sparse -f z.crlf/a
rm -rf a/q.log
mkdir -p z.crlf
printf 'local eps 8\n' >z.crlf/E
true

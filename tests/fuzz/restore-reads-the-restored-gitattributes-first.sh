#!/bin/sh
# git-fuzz scenario: restore --source b --staged --worktree where the root .gitattributes is the first path written: git unlinks the old file before it looks attributes up and reads the restored one from the index, for itself and every path after it (seed 17161)
# Run in an empty directory: it builds the repository with plain git. Then, in
# the directory `cwd` names, run `git` with the command's arguments (git), or
# git-par the same way (`unprivileged`: through `setpriv --inh-caps=-dac_override
# --bounding-set=-dac_override --`); `git-fuzz replay FILE` does both and compares.
#@ command: restore --staged --worktree --source b :/
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=8 checkout.thresholdForParallelism=0
set -e
export GIT_CONFIG_NOSYSTEM=1
export GIT_CONFIG_GLOBAL=/dev/null
export LC_ALL=C
export TZ=UTC
export GIT_AUTHOR_NAME='A U Thor'
export GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME='C O Mitter'
export GIT_COMMITTER_EMAIL=committer@example.com
export GIT_AUTHOR_DATE='1700000000 +0000'
export GIT_COMMITTER_DATE='1700000000 +0000'
export GIT_EDITOR=true
export GIT_MERGE_AUTOEDIT=no
export GIT_CONFIG_COUNT=1
export GIT_CONFIG_KEY_0=init.defaultBranch
export GIT_CONFIG_VALUE_0=main
export HOME="$PWD"
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

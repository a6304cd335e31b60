#!/bin/sh
# git-fuzz scenario: switch with a sparse checkout on, a tracked directory turned file holding an untracked file: git deletes it, git-par refuses as git does without sparse checkout (a documented safer refusal) (seed 15545)
# Run in an empty directory: it builds the repository with plain git. Then, in
# the directory `cwd` names, run `git` with the command's arguments (git), or
# git-par the same way (`unprivileged`: through `setpriv --inh-caps=-dac_override
# --bounding-set=-dac_override --`); `git-fuzz replay FILE` does both and compares.
#@ command: checkout --detach b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
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
git config core.autocrlf true
printf '*.bin -text\nd/** -text\n' >.gitattributes
mkdir -p A
printf 'delta 6\nalpha 0\nalpha 7\nzeta 2\n' >A/E
printf 'eta 2\ndelta 9\neps 2\ngamma 6\nalpha 1\n' >D
seq 5 6087 >a
printf 'eta 1\015\n$Id$\015\neps 1\015\n' >f
seq 79 29332 >'s p'
printf 'gamma 7\nalpha 8\nzeta 4\neps 8\nzeta 2\neps 8\nalpha 1' >v.log
mkdir -p 'é/a'
ln -s ../../D 'é/a/é'
mkdir -p 'é'
printf 'eps 1' >'é/x.txt'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf D
rm -rf 'é/a/é'
ln -s nowhere D
seq 5 6501 >a
rm -rf 'é/a'
mkdir -p 'é'
printf 'zeta 9\ngamma 3\n' >'é/a'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q -c c main
rm -rf D
ln -s ../outside D
git add -A -f . && git commit -q --allow-empty -m c
git switch -q main
set +e
git sparse-checkout set --no-cone '/*'
mkdir -p 'é/a'
printf 'local alpha 8\n' >'é/a/e'
true

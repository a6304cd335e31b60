#!/bin/sh
# git-fuzz scenario: switch --discard-changes where git reports untracked files in the way and removes them all the same: git-par stops at that error (a documented safer refusal) (seed 17855)
# Run in an empty directory: it builds the repository with plain git. Then, in
# the directory `cwd` names, run `git` with the command's arguments (git), or
# git-par the same way (`unprivileged`: through `setpriv --inh-caps=-dac_override
# --bounding-set=-dac_override --`); `git-fuzz replay FILE` does both and compares.
#@ command: switch --discard-changes b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=1 checkout.thresholdForParallelism=0
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
printf '*.o\n' >.gitignore
ln -s nowhere A
mkdir -p F
ln -s nowhere F/b
mkdir -p b
printf 'delta 1\neps 7\neta 5\n' >b/x.txt
mkdir -p d/E
: >d/E/n.lf
mkdir -p f/x.txt
printf 'delta 0\ngamma 9\n' >f/x.txt/q.log
mkdir -p v.log/E
printf 'delta 0\ndelta 8\n' >v.log/E/x.txt
chmod +x v.log/E/x.txt
seq 55 2779 >w.id
mkdir -p 'é'
printf 'theta 7\015\nbeta 4\015\ndelta 5\015\nalpha 7\015\neps 1\015\n' >'é/x.txt'
git add -A -f . && git commit -q -m a
git switch -q -c b
rm -rf 'é/x.txt'
rm -rf 'é'
printf '\315T\027\000' >'é'
git add -A -f . && git commit -q --allow-empty -m b
git switch -q main
set +e
git sparse-checkout set d/E
rm -rf v.log/E/x.txt
git update-index --skip-worktree w.id 2>/dev/null
seq 55 2881 >w.id
mkdir -p v.log
printf 'local theta 0\n' >v.log/x.txt
git add --sparse -f v.log/x.txt
git rm --sparse -q -r -f w.id 2>/dev/null
mkdir -p 'é'
printf 'local beta 6\n' >'é/a'
mkdir -p 'é'
printf 'local theta 5\n' >'é/é'
true

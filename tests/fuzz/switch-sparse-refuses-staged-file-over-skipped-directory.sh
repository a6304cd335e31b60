#!/bin/sh
# git-fuzz scenario: switch where the target brings entries below a staged file, left out by the sparse patterns: git drops the staged file, git-par refuses and never records both a and a/E (a documented safer refusal) (seed 3839)
# Run in an empty directory: it builds the repository with plain git. Then, in
# the directory `cwd` names, run `git` with the command's arguments (git), or
# git-par the same way (`unprivileged`: through `setpriv --inh-caps=-dac_override
# --bounding-set=-dac_override --`); `git-fuzz replay FILE` does both and compares.
#@ command: checkout --detach b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
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

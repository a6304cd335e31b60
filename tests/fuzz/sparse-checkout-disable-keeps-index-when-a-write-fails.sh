#!/bin/sh
# git-fuzz scenario: sparse-checkout disable where an entry cannot be written (its directory read-only): git dies and rolls its index lock back, the skip-worktree bit stays (seed 17793)
# Run in an empty directory: it builds the repository with plain git. Then, in
# the directory `cwd` names, run `git` with the command's arguments (git), or
# git-par the same way (`unprivileged`: through `setpriv --inh-caps=-dac_override
# --bounding-set=-dac_override --`); `git-fuzz replay FILE` does both and compares.
#@ command: sparse-checkout disable
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
#@ unprivileged: yes
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

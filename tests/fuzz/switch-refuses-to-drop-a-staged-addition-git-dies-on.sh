#!/bin/sh
# git-fuzz scenario: switch where a file replaces a directory holding a staged addition, the directory read-only: git sets out to remove the staged file, warns, and dies; git-par refuses to drop the staged change (the documented safer refusal)
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir d && echo e >d/E && echo z >z && git add . && git commit -q -m one
git switch -q -c b
git rm -q -r d && echo file >d && git add d && git commit -q -m two
git switch -q main
echo staged >d/a && git add d/a && chmod 555 d

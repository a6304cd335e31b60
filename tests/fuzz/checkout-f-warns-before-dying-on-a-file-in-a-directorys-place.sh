#!/bin/sh
# git-fuzz scenario: checkout -f where a file stands in the place of a tracked file's directory, in a read-only directory: git warns that it cannot unlink the file, then dies ("cannot create directory at")
#@ command: checkout -f main
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir -p x/d && echo a >a && echo e >x/d/e && echo z >z && git add . && git commit -q -m one
echo local-a >a && echo local-z >z && rm -r x/d && echo local >x/d && chmod 555 x

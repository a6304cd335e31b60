#!/bin/sh
# git-fuzz scenario: checkout -- :/ where a directory stands in a file's place inside a read-only directory: git writes the paths before it, then dies ("cannot rmdir")
#@ command: checkout -- :/
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir y && echo a >A && echo f >y/a && git add . && git commit -q -m one
rm A && rm y/a && mkdir y/a && chmod 555 y

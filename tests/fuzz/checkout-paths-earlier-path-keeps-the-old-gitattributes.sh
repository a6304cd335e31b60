#!/bin/sh
# git-fuzz scenario: checkout b -- . where a path sorts before the root .gitattributes: git reads the old .gitattributes for it and keeps those attributes for every path after it
#@ command: checkout b -- .
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
printf '*.txt eol=crlf\n' >.gitattributes && echo a >a.txt && git add . && git commit -q -m one
git switch -q -c b
printf '*.bin -text\n' >.gitattributes && printf 'q\n' >+q.txt && printf 'p\n' >p.txt && git add . && git commit -q -m two
git switch -q main

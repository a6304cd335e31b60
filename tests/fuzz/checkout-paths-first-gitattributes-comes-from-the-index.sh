#!/bin/sh
# git-fuzz scenario: checkout b -- . where the root .gitattributes is the first path written: git unlinks it before looking attributes up, so the restored one (from the index) applies to the files after it
#@ command: checkout b -- .
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
printf '*.txt eol=crlf\n' >.gitattributes && echo a >a.txt && git add . && git commit -q -m one
git switch -q -c b
printf '*.bin -text\n' >.gitattributes && mkdir d && printf 'x\ny\n' >d/x.txt && printf 'p\n' >p.txt && git add . && git commit -q -m two
git switch -q main

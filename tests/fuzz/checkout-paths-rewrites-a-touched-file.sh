#!/bin/sh
# git-fuzz scenario: checkout -- path of a file whose stat data changed but whose content did not: git's ie_match_stat sees it changed and rewrites it (here with the CRLF endings core.autocrlf now asks for)
#@ command: checkout -- f
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
set -e
git init -q -b main repo
cd repo
printf 'one\ntwo\n' >f && echo g >g && git add . && git commit -q -m one
git config core.autocrlf true
touch -d '2001-02-03 04:05:06' f

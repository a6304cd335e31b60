#!/bin/sh
# git-fuzz scenario: switch: a staged deletion whose place is a directory holding an intent-to-add entry (git: local change)
#@ command: switch -c new b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo F >F && echo k >k && git add . && git commit -q -m one
git switch -q -c b && git rm -q F && git commit -q -m two && git switch -q main
git rm -q F && mkdir F && echo local >F/q && git add -N F/q

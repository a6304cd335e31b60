#!/bin/sh
# git-fuzz scenario: reset --hard WORD where WORD is no revision but a file: git treats it as a path
#@ command: reset --hard nope
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && git add f && git commit -q -m one
echo local >f && echo x >nope

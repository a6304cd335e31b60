#!/bin/sh
# git-fuzz scenario: reset --hard REV where REV also names a file: git refuses as ambiguous (git-par reset and lost the edit)
#@ command: reset --hard b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >b && git add b && git commit -q -m one
git branch b
echo local edit >b

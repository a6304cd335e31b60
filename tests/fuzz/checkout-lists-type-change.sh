#!/bin/sh
# git-fuzz scenario: checkout: a carried-over file replaced by a symlink is listed as T
#@ command: checkout -b new b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && echo two >g && git add . && git commit -q -m one
git switch -q -c b && echo changed >g && git commit -q -a -m two && git switch -q main
rm f && ln -s g f

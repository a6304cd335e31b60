#!/bin/sh
# git-fuzz scenario: switch: the carried-over change of a tracked file replaced by a directory is D, as git lists it
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
echo one >f && echo two >g && git add . && git commit -q -m one
git switch -q -c b && echo changed >g && git commit -q -a -m two && git switch -q main
rm f && mkdir f && echo local >f/inside

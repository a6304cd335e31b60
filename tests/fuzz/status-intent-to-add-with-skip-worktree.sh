#!/bin/sh
# git-fuzz scenario: status where an intent-to-add entry also has the skip-worktree bit: git's diff-files skips it before it looks at intent-to-add, so nothing is listed
#@ command: status --porcelain=v2
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo a >a && git add a && git commit -q -m one
echo new >n && git add -N n && git update-index --skip-worktree n
echo changed >n && echo gone >g && git add -N g && git update-index --skip-worktree g && rm g

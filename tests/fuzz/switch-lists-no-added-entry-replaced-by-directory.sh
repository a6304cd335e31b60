#!/bin/sh
# git-fuzz scenario: switch: a staged new file replaced by a directory is no carried-over change (git lists nothing)
#@ command: switch --detach main
#@ cwd: repo
#@ observe: repo
#@ git-par: direct
set -e
git init -q -b main repo
cd repo
echo one >f && git add f && git commit -q -m one
mkdir d && echo new >d/n && git add d/n
rm d/n && mkdir d/n && echo local >d/n/inside

#!/bin/sh
# git-fuzz scenario: reset --hard to a commit where a file replaces a directory whose tracked file cannot be unlinked (read-only): git warns, writes the entries before it, removes the directories the removals emptied, then dies ("cannot unlink")
#@ command: reset --hard b
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ unprivileged: yes
set -e
git init -q -b main repo
cd repo
mkdir d y && echo a >a && echo f >d/f && echo old >y/old && echo z >z && git add . && git commit -q -m one
git switch -q -c b
git rm -q -r d y/old && echo a2 >a && echo file >d && mkdir -p y && echo new >y/new && echo z2 >z && git add . && git commit -q -m two
git switch -q main
chmod 555 d

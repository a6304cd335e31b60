#!/bin/sh
# git-fuzz scenario: checkout b -- . where the root .gitattributes is written first and an unchanged file is racily clean: git compares it by content with the restored attributes, finds it changed and rewrites it (seed 19125)
#@ command: checkout b -- .
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=1 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
printf '*.txt eol=crlf\n*.bin -text\n' >.gitattributes
printf 'ign/\ntmp*\n' >.gitignore
ln -s nowhere A
ln -s d/x.txt D
printf 'alpha 1\ntheta 2\neta 0\n' >F
mkdir -p a
printf 'eps 1\ntheta 0\neta 9\n' >a/E
printf 'delta 5\nzeta 0\neta 4\nbeta 3\n' >b
mkdir -p d
printf 'delta 4\ngamma 9\n' >d/x.txt
mkdir -p w.id/e
printf ')Q5\322\321+:\343BHC\017\361\3736\307Q\336\233(=\344\230:NR=\265\375\266\332?\304\332mv]\235\213\007\000' >w.id/e/E
printf 'alpha 0\nzeta 3\neta 7\nzeta 7\nalpha 0\nzeta 5\nbeta 9\n' >y.bin
printf 'beta 1\nalpha 2\ntheta 6\ngamma 6\ngamma 2\nzeta 5\ngamma 5\neps 4\n' >z.crlf
mkdir -p 'é/n.lf'
ln -s nowhere 'é/n.lf/E'
git add -A -f . && git commit -q -m a
git switch -q -c b
printf 'd/** -text\n*.crlf text eol=crlf\n' >.gitattributes
printf 'alpha 1\ntheta 2\n' >F
mkdir -p a
printf 'eps 1\ntheta 0\nzeta 9\n' >a/E
mkdir -p a
printf 'beta 5\neps 0\ngamma 4\nzeta 1\nzeta 2\nzeta 1\neta 1' >a/x.txt
git add -A -f . && git commit -q --allow-empty -m b
git switch -q -c c main
rm -rf F
rm -rf b
rm -rf z.crlf
mkdir -p F
printf 'alpha 8\nbeta 6\nzeta 0\ngamma 1\nalpha 7\neta 6\nalpha 8\n$Id$\n' >F/f
mkdir -p d
chmod +x d/x.txt
ln -s d z.crlf
git add -A -f . && git commit -q --allow-empty -m c
git switch -q main
set +e
rm -rf F && mkdir F
mkdir -p F
printf 'local delta 2\n' >F/inside
mkdir -p a
printf 'local eps 3\n' >a/x.txt
true

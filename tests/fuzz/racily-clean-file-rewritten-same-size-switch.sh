#!/bin/sh
# git-fuzz scenario: switch b where f was rewritten with the same size within the second its entry and the index were written in (times set with touch -d): git compares times in whole seconds, finds f racily clean, sees its content differ and smudges the entry when it writes the index, so a later index cannot hide the change; git-par compared nanoseconds and wrote f's old stat data unsmudged (seeds 5942, 8442, 10580, 16205)
#@ command: switch b
#@ cwd: repo
#@ observe: repo
#@ git-par: as-git
#@ git-par-config: checkout.workers=2 checkout.thresholdForParallelism=0
set -e
git init -q -b main repo
cd repo
git config core.trustctime false
printf 'eps 2\ndelta 6\neps 0\n' >f
printf 'other\n' >g
printf 'x\n' >h
git add -A -f . && git commit -q -m a
git switch -q -c b
printf 'z\n' >h
git add -A -f . && git commit -q -m b
git switch -q main
set +e
touch -d '2024-01-01 00:00:00.100000000' f
touch -d '2020-01-01 00:00:00' g
git update-index --refresh
touch -d '2024-01-01 00:00:00.500000000' .git/index
printf 'eps 2\ndelta 6\neta 3\n' >f
touch -d '2024-01-01 00:00:00.300000000' f
touch -d '2021-01-01 00:00:00' g
true

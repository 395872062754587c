#!/bin/sh
# check-test-numbers.sh - every numbered test script has a number of its
# own: two integration tests (tNNNN-*.sh) or two security tests
# (sNNNN-*.sh) with the same number are an error (a log or a report that
# names the number would name two tests).  Prints each number used more
# than once with its scripts and exits 1 when there is one.
set -eu
cd "$(dirname "$0")/.."
dups=$(git ls-files 'tests/integration/t[0-9]*.sh' 'tests/security/s[0-9]*.sh' |
	sed -n 's|^tests/[a-z]*/\([ts][0-9][0-9]*\)-.*|\1|p' | sort | uniq -d)
[ -z "$dups" ] && exit 0
for n in $dups; do
	echo "test number $n is used by more than one script:" \
	    $(git ls-files "tests/integration/$n-*.sh" "tests/security/$n-*.sh")
done
exit 1

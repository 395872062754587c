#!/bin/sh
# run-unit.sh BUILD_DIR - runs every cmocka unit test binary in
# BUILD_DIR/tests, printing cmocka's own summary lines, then one total.
# VALGRIND=1 runs each under valgrind (errors and definite leaks fail).
set -u
dir=$1/tests
pass=0 fail=0 failed=""
for t in "$dir"/test-*; do
	[ -x "$t" ] || continue
	case "$t" in *.d) continue ;; esac
	name=$(basename "$t")
	if [ -n "${VALGRIND:-}" ]; then
		valgrind -q --error-exitcode=99 --leak-check=full \
		    --errors-for-leak-kinds=definite --track-fds=no \
		    --trace-children=no "$t"
	else
		"$t"
	fi
	rc=$?
	if [ $rc -eq 0 ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); failed="$failed $name"; fi
done
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "unit: failed:$failed"; exit 1; }

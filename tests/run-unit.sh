#!/bin/sh
# run-unit.sh BUILD_DIR - runs every cmocka unit test binary in
# BUILD_DIR/tests, showing cmocka's own output and summary lines, then
# one total of the tests cmocka ran:
#   unit: N passed, N failed, N skipped
# and, after it, one line per skipped test with the reason the test
# printed just before skipping, if any:
#   unit: skipped test-cgroup/test_memory_oom: no usable cgroup v2 (...)
# A binary that exits non-zero without a failed test (a crash, an error
# in a group setup, valgrind) counts as one failed test.
# VALGRIND=1 runs each under valgrind (errors and definite leaks fail).
set -u
dir=$1/tests
pass=0 fail=0 skip=0 failed=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
: >"$tmp/skipped"
for t in "$dir"/test-*; do
	[ -x "$t" ] || continue
	case "$t" in *.d) continue ;; esac
	name=$(basename "$t")
	{
		if [ -n "${VALGRIND:-}" ]; then
			valgrind -q --error-exitcode=99 --leak-check=full \
			    --errors-for-leak-kinds=definite --track-fds=no \
			    --trace-children=no "$t" 2>&1
		else
			"$t" 2>&1
		fi
		echo $? >"$tmp/rc"
	} | tee "$tmp/out"
	rc=$(cat "$tmp/rc")
	# cmocka prints "[       OK ] t", "[  FAILED  ] t" and
	# "[  SKIPPED ] t" as each test ends, then lists them again under
	# "[==========] N test(s) run."; count only the first.
	set -- $(awk -v name="$name" -v skips="$tmp/skipped" '
	    /^\[==========\] .*Running / { summary = 0 }
	    /^\[==========\] .* run\.$/ { summary = 1 }
	    !summary && /^\[       OK \] / { ok++ }
	    !summary && /^\[  FAILED  \] / { bad++ }
	    !summary && /^\[  SKIPPED \] / {
		t = substr($0, 14)
		why = prev ~ /^\[/ ? "" : prev
		sub(/^skipped: */, "", why)
		printf "unit: skipped %s/%s%s%s\n", name, t,
		    why != "" ? ": " : "", why >>skips
		sk++
	    }
	    # the lines valgrind itself prints (--PID--, ==PID==) are no reasons
	    !/^(--|==)[0-9]+(--|==)/ { prev = $0 }
	    END { print ok + 0, bad + 0, sk + 0 }' "$tmp/out")
	ok=$1 bad=$2 sk=$3
	if [ "$rc" -ne 0 ]; then
		[ "$bad" -gt 0 ] || bad=1
		failed="$failed $name"
	fi
	pass=$((pass + ok)) fail=$((fail + bad)) skip=$((skip + sk))
done
[ $fail -eq 0 ] || echo "unit: failed:$failed"
echo "unit: $pass passed, $fail failed, $skip skipped"
cat "$tmp/skipped"
[ $fail -eq 0 ]

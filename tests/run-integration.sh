#!/bin/sh
# run-integration.sh BUILD_DIR - runs tests/integration/t*.sh in order with
# VIGIL=BUILD_DIR/vigil.  Each script exits 0 (pass), 77 (skipped: it
# prints the reason as its last line) or anything else (fail).  Ends with
#   integration: N passed, N failed, N skipped
# and, after it, one line per skipped test with that reason.  ONLY=pattern
# runs a subset.
set -u
here=$(cd "$(dirname "$0")" && pwd)
VIGIL=$(cd "$1" && pwd)/vigil
export VIGIL
pass=0 fail=0 skip=0 failed="" skipped=""
for t in "$here"/integration/t*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	case "$name" in *${ONLY:-}*) ;; *) continue ;; esac
	start=$(date +%s)
	out=$(mktemp)
	sh "$t" >"$out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)	pass=$((pass + 1)); echo "ok   $name (${secs}s)" ;;
	77)	skip=$((skip + 1)); why=$(tail -n 1 "$out")
		skipped="${skipped}integration: skipped $name: $why
"
		echo "SKIP $name: $why" ;;
	*)	fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL $name (exit $rc, ${secs}s)"; sed 's/^/     | /' "$out" | tail -n 40 ;;
	esac
	rm -f "$out"
done
[ $fail -eq 0 ] || echo "integration: failed:$failed"
echo "integration: $pass passed, $fail failed, $skip skipped"
printf '%s' "$skipped"
[ $fail -eq 0 ]

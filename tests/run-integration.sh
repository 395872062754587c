#!/bin/sh
# run-integration.sh BUILD_DIR - runs tests/integration/t*.sh and the
# hostile-task suite tests/security/s*.sh with VIGIL=BUILD_DIR/vigil.  Each script exits 0 (pass), 77 (skipped: it
# prints the reason as its last line) or anything else (fail).  Ends with
#   integration: N passed, N failed, N skipped
# and, after it, one line per skipped test with that reason.  ONLY=pattern
# runs a subset.
#
# Areas that share nothing run side by side: the Slurm tests (t07* and
# s0107, one private cluster on fixed ports, so one at a time) in one lane, every
# other test in order in the other.  LANES=1 runs everything in one lane.
# A line is printed as each test ends.
set -u
here=$(cd "$(dirname "$0")" && pwd)
VIGIL=$(cd "$1" && pwd)/vigil
export VIGIL
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT

# run_lane N TEST... - runs the tests in order; appends "rc name why" lines
# to $res/N.
run_lane() {
	lane=$1; shift
	: >"$res/$lane"
	for t in "$@"; do
		name=$(basename "$t" .sh)
		start=$(date +%s)
		out="$res/$name.out"
		sh "$t" >"$out" 2>&1
		rc=$?
		secs=$(( $(date +%s) - start ))
		case $rc in
		0)	echo "ok   $name (${secs}s)"; echo "0 $name" >>"$res/$lane" ;;
		77)	why=$(tail -n 1 "$out")
			echo "SKIP $name: $why"
			echo "77 $name $why" >>"$res/$lane" ;;
		*)	{ echo "FAIL $name (exit $rc, ${secs}s)"
			  sed 's/^/     | /' "$out" | tail -n 40; } >"$res/$name.fail"
			cat "$res/$name.fail"
			echo "1 $name" >>"$res/$lane" ;;
		esac
		rm -f "$out"
	done
}

slurm="" rest=""
for t in "$here"/integration/t*.sh "$here"/security/s[0-9]*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	case "$name" in *${ONLY:-}*) ;; *) continue ;; esac
	case "$name" in
	t07*|s0107-*)	slurm="$slurm $t" ;;
	*)	rest="$rest $t" ;;
	esac
done
# shellcheck disable=SC2086
if [ "${LANES:-2}" = 1 ]; then
	run_lane a $rest $slurm
else
	run_lane a $rest &
	run_lane b $slurm &
	wait
fi

pass=0 fail=0 skip=0 failed="" skipped=""
for lane in "$res"/a "$res"/b; do
	[ -f "$lane" ] || continue
	while read -r rc name why; do
		case $rc in
		0)	pass=$((pass + 1)) ;;
		77)	skip=$((skip + 1))
			skipped="${skipped}integration: skipped $name: $why
" ;;
		*)	fail=$((fail + 1)); failed="$failed $name" ;;
		esac
	done <"$lane"
done
[ $fail -eq 0 ] || echo "integration: failed:$failed"
echo "integration: $pass passed, $fail failed, $skip skipped"
printf '%s' "$skipped"
[ $fail -eq 0 ]

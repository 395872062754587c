#!/bin/sh
# report.sh - the cost of `vigil report`: a 100,000-task run
# (bench/lib/synth-run.sh), best of three, and the page's size (targets
# <= 2 s, < 20 MB); then what accounting costs a run, measured in one
# binary by `bench/local-overhead.sh --accounting` (target <= 1.02;
# ACCOUNTING=0 skips it).
#
# VIGIL the binary (build/vigil).
set -eu
cd "$(dirname "$0")/.."
VIGIL=${VIGIL:-$PWD/build/vigil}
W=$(mktemp -d /tmp/vigil-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT INT TERM
now_ms() { date +%s%3N; }

best() { # best of the times in $@
	printf '%s\n' "$@" | sort -n | head -n 1
}

VIGIL_HOME=$W/big
export VIGIL_HOME
id=$(bench/lib/synth-run.sh "$VIGIL" 100000)
r1= r2= r3=
for k in 1 2 3; do
	t0=$(now_ms)
	"$VIGIL" report "$id" -o "$W/r.html" >/dev/null
	t1=$(now_ms)
	eval "r$k=$((t1 - t0))"
done
rb=$(best "$r1" "$r2" "$r3")
size=$(stat -c %s "$W/r.html")
echo "vigil report of 100000 tasks: ${rb} ms (best of 3; target <= 2000): $( [ "$rb" -le 2000 ] && echo ok || echo OVER)"
echo "report size: $size bytes (target < 20000000): $( [ "$size" -lt 20000000 ] && echo ok || echo OVER)"
[ "${ACCOUNTING:-1}" = 0 ] || VIGIL=$VIGIL sh bench/local-overhead.sh --accounting

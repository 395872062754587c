#!/bin/sh
# report.sh - the cost of run accounting and of `vigil report`.
#
#   1. Accounting overhead: 1000 `true` tasks through `vigil run --jobs 2`
#      with this vigil against the same run with a vigil built in this
#      script from BASE (default: the commit before accounting, the
#      parent of the first commit that touched runner/core/usage.c),
#      alternating three times each; prints the best of each and the
#      ratio (target <= 1.02).
#   2. `vigil report` of a 100,000-task run (bench/lib/synth-run.sh):
#      best of three, and the page's size (targets <= 2 s, < 20 MB).
#
# N=... changes the task count of 1; VIGIL the binary (build/vigil).
set -eu
cd "$(dirname "$0")/.."
VIGIL=${VIGIL:-$PWD/build/vigil}
N=${N:-1000}
W=$(mktemp -d /tmp/vigil-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT INT TERM
now_ms() { date +%s%3N; }

BASE=${BASE:-$(git log --format=%H --reverse -- runner/core/usage.c | head -n 1)^}
mkdir -p "$W/base"
git archive "$BASE" | tar -x -C "$W/base"
echo "building the baseline vigil ($(git rev-parse --short "$BASE"))..."
make -C "$W/base" -j2 >/dev/null 2>&1 || { echo "baseline build failed"; exit 1; }
BASEV=$W/base/build/release/vigil

{
	echo "version: 1"
	echo "name: bench-acct"
	echo 'command: ["true"]'
	printf "matrix:\n  i: ["
	seq -s, 0 $((N - 1)) | tr -d '\n'
	echo "]"
} >"$W/m.yaml"

best() { # best of the times in $@
	printf '%s\n' "$@" | sort -n | head -n 1
}
a1= a2= a3= b1= b2= b3=
for k in 1 2 3; do
	for v in base new; do
		bin=$VIGIL
		[ $v = base ] && bin=$BASEV
		VIGIL_HOME=$W/home-$v-$k
		export VIGIL_HOME
		t0=$(now_ms)
		"$bin" run -q --jobs 2 "$W/m.yaml" >/dev/null
		t1=$(now_ms)
		eval "${v}_$k=$((t1 - t0))"
	done
done
bb=$(best "$base_1" "$base_2" "$base_3")
nb=$(best "$new_1" "$new_2" "$new_3")
echo "vigil run -j 2, $N x true, without accounting: ${bb} ms (best of 3)"
echo "vigil run -j 2, $N x true, with accounting:    ${nb} ms (best of 3)"
awk -v n="$nb" -v b="$bb" 'BEGIN { r = n / b; printf "ratio with/without: %.3f (target <= 1.02): %s\n", r, r <= 1.02 ? "ok" : "OVER" }'

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

#!/bin/sh
# policy.sh - policy gate throughput on one core: classifies the corpus
# (tests/policy/*.tsv) repeatedly and prints commands per second in
# process, the ratio against a regex-list gate timed in the same run, and
# resident memory after warm-up and at the end.  Then it feeds the same
# commands to `vigil check --stdin` with auditing on (a fresh state
# database and a JSON-lines audit file) and prints its rate, its ratio to
# the in-process rate and its peak memory for two input sizes (flat
# memory: the larger input must not need more).  vigil check runs on
# any core (its audit writer is a second thread).  Targets: >= 200,000
# commands/s in process and through `vigil check --stdin`, and the latter
# >= 0.8x the former.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
make --no-print-directory policy-bench all >/dev/null
secs=${POLICY_BENCH_SECONDS:-3}
lines=${POLICY_BENCH_LINES:-1000000}
corpus="tests/policy/corpus.tsv tests/policy/holdout.tsv tests/policy/effects.tsv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/inproc
status=0
taskset -c 0 build/release/bench/policy-bench "$secs" $corpus >"$out" ||
	status=1
cat "$out"
inrate=$(awk -F: "/^vigil gate, this process/ { split(\$2, f, \" \"); print f[1] }" "$out")

# The corpus commands repeated to $lines lines, and a quarter of that.
awk -F '\t' '!/^#/ && NF >= 3 { print $3 }' $corpus >"$work/one"
n1=$(wc -l <"$work/one")
reps=$(( (lines + n1 - 1) / n1 ))
i=0
while [ "$i" -lt "$reps" ]; do cat "$work/one"; i=$((i + 1)); done |
	head -n "$lines" >"$work/big"
head -n $((lines / 4)) "$work/big" >"$work/small"

# Runs vigil check --stdin on file $1 with auditing on; prints
# "SECONDS MAXRSS_KIB AUDITED".
run_check() {
	rm -rf "$work/home"
	mkdir -p "$work/home"
	t0=$(date +%s.%N)
	VIGIL_HOME=$work/home /usr/bin/time -f %M -o "$work/rss" \
		build/release/vigil check --stdin \
		--audit-log "$work/home/audit.jsonl" <"$1" >/dev/null || true
	t1=$(date +%s.%N)
	rows=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from audit").fetchone()[0])' "$work/home/vigil.db")
	echo "$t0 $t1 $(tail -n 1 "$work/rss") $rows"
}
set -- $(run_check "$work/small")
small_rss=$3
# Three runs on the large input (the machine is shared: the best of
# three is the gate's speed, the others show the noise).
best=0 all=""
for k in 1 2 3; do
	set -- $(run_check "$work/big")
	r=$(awk -v n="$lines" -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", n / (b - a) }')
	all="$all $r"
	[ "$r" -gt "$best" ] && best=$r
	big_rss=$3
	rows=$4
done
rate=$best
ratio=$(awk -v r="$rate" -v i="$inrate" 'BEGIN { printf "%.2f", r / i }')
echo "vigil check --stdin, audit on: $rate commands/s, best of$all" \
	"($lines lines, $rows audit rows; ratio to in-process with the" \
	"same context $ratio)"
echo "check rss: $small_rss KiB peak for $((lines / 4)) lines," \
	"$big_rss KiB for $lines"
[ "$rows" -eq "$lines" ] || { echo "audit incomplete"; status=1; }
[ "$rate" -ge 200000 ] || status=1
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8) }' || status=1
awk -v s="$small_rss" -v b="$big_rss" 'BEGIN { exit !(b <= s * 1.1 + 1024) }' ||
	{ echo "check memory grows with input"; status=1; }
exit "$status"

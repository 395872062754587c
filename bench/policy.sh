#!/bin/sh
# policy.sh - policy gate throughput on one core: classifies the corpus
# (tests/policy/*.tsv) repeatedly and prints commands per second in
# process, the ratio against a regex-list gate timed in the same run, and
# resident memory after warm-up and at the end.  Then it feeds the same
# commands to `vigil check --stdin` with auditing on (a fresh state
# database and a JSON-lines audit file), pinned to the same single core
# as the in-process gate (its audit writer thread shares that core), and
# prints its rate, its ratio to the in-process rate and its peak memory
# for two input sizes (flat memory: the larger input must not need more).
#
# Every rate is given per second of wall time and per CPU second (user +
# system time of the whole process).  The machine is shared: the wall
# rates move with the load average (printed), the CPU rates much less;
# each side is the best of POLICY_BENCH_RUNS runs, and the targets are
# judged on the CPU rates: >= 200,000 commands/s in process and through
# `vigil check --stdin`, and the latter >= 0.8x the former.  Every
# decision must be in the audit (table rows plus packed records).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
make --no-print-directory policy-bench all >/dev/null
secs=${POLICY_BENCH_SECONDS:-2}
lines=${POLICY_BENCH_LINES:-1000000}
runs=${POLICY_BENCH_RUNS:-3}
corpus="tests/policy/corpus.tsv tests/policy/holdout.tsv tests/policy/effects.tsv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
echo "load average: $(cut -d ' ' -f 1-3 /proc/loadavg) on $(nproc) cores"

# In process: the best of $runs runs by the CPU rate with this
# process's context (the context vigil check uses).
inrate=0 inwall=0 all=""
k=0
while [ "$k" -lt "$runs" ]; do
	taskset -c 0 build/release/bench/policy-bench "$secs" $corpus \
	    >"$work/inproc" || status=1
	line=$(grep "^vigil gate, this process" "$work/inproc")
	c=$(echo "$line" | awk '{ print $(NF - 3) }')
	w=$(echo "$line" | awk -F: '{ split($2, f, " "); print f[1] }')
	all="$all $c"
	if [ "$c" -gt "$inrate" ]; then
		inrate=$c inwall=$w
		cp "$work/inproc" "$work/inbest"
	fi
	k=$((k + 1))
done
cat "$work/inbest"
echo "in-process best of $runs by CPU rate:$all"

# The corpus commands repeated to $lines lines, and a quarter of that.
awk -F '\t' '!/^#/ && NF >= 3 { print $3 }' $corpus >"$work/one"
n1=$(wc -l <"$work/one")
reps=$(( (lines + n1 - 1) / n1 ))
i=0
while [ "$i" -lt "$reps" ]; do cat "$work/one"; i=$((i + 1)); done |
	head -n "$lines" >"$work/big"
head -n $((lines / 4)) "$work/big" >"$work/small"

# Runs vigil check --stdin on file $1 with auditing on, on core 0;
# prints "WALL_S CPU_S MAXRSS_KIB AUDITED".
run_check() {
	rm -rf "$work/home"
	mkdir -p "$work/home"
	VIGIL_HOME=$work/home /usr/bin/time -f '%e %U %S %M' -o "$work/tm" \
		taskset -c 0 build/release/vigil check --stdin \
		--audit-log "$work/home/audit.jsonl" <"$1" >/dev/null || true
	rows=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select (select count(*) from audit) + (select coalesce(sum(n), 0) from audit_pack)").fetchone()[0])' "$work/home/vigil.db")
	flines=$(wc -l <"$work/home/audit.jsonl")
	[ "$flines" -eq "$rows" ] || echo "audit file has $flines lines" >&2
	tail -n 1 "$work/tm" | awk -v r="$rows" '{ print $1, $2 + $3, $4, r }'
}
set -- $(run_check "$work/small")
small_rss=$3
best=0 bwall=0 all=""
k=0
while [ "$k" -lt "$runs" ]; do
	set -- $(run_check "$work/big")
	c=$(awk -v n="$lines" -v t="$2" 'BEGIN { printf "%.0f", n / t }')
	w=$(awk -v n="$lines" -v t="$1" 'BEGIN { printf "%.0f", n / t }')
	all="$all $c"
	if [ "$c" -gt "$best" ]; then best=$c bwall=$w; fi
	big_rss=$3
	rows=$4
	k=$((k + 1))
done
ratio=$(awk -v r="$best" -v i="$inrate" 'BEGIN { printf "%.2f", r / i }')
wratio=$(awk -v r="$bwall" -v i="$inwall" 'BEGIN { printf "%.2f", r / i }')
echo "vigil check --stdin, audit on, one core: $best commands per CPU" \
	"second, best of$all ($lines lines, $rows audited); ratio to" \
	"in-process with the same context $ratio"
echo "  wall: $bwall commands/s against $inwall in process (ratio $wratio)"
echo "check rss: $small_rss KiB peak for $((lines / 4)) lines," \
	"$big_rss KiB for $lines"
echo "load average: $(cut -d ' ' -f 1-3 /proc/loadavg)"
[ "$rows" -eq "$lines" ] || { echo "audit incomplete"; status=1; }
[ "$best" -ge 200000 ] || status=1
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8) }' || status=1
awk -v s="$small_rss" -v b="$big_rss" 'BEGIN { exit !(b <= s * 1.1 + 1024) }' ||
	{ echo "check memory grows with input"; status=1; }
exit "$status"

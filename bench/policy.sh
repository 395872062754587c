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
# rates move with the load average (printed), and even the CPU rate of
# one binary moves by a third from one second to the next, so the two
# sides are measured at the same time on the same core: each of
# POLICY_BENCH_PAIRS (15) pairs runs the in-process gate (with
# POLICY_BENCH_UNTIL_SIGNAL, until told to stop) and `vigil check
# --stdin` on POLICY_BENCH_PAIR_LINES (300,000) lines side by side, both
# pinned to core 0, and stops the gate when check ends; each side's rate
# is per CPU second of its own, so both meet the same machine (and share
# the core's caches, as two programs on one core do).  The targets are
# judged on the CPU rates: the median check rate of the pairs >= 200,000
# commands/s and the median of the pairs' ratios >= 0.8.  Every decision
# must be in the audit (table rows plus packed records).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
make --no-print-directory policy-bench all >/dev/null
secs=${POLICY_BENCH_SECONDS:-2}
lines=${POLICY_BENCH_LINES:-1000000}
pairs=${POLICY_BENCH_PAIRS:-15}
plines=${POLICY_BENCH_PAIR_LINES:-300000}
corpus="tests/policy/corpus.tsv tests/policy/holdout.tsv tests/policy/effects.tsv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
echo "load average: $(cut -d ' ' -f 1-3 /proc/loadavg) on $(nproc) cores"

# The corpus commands repeated to $lines lines, and a quarter of that.
awk -F '\t' '!/^#/ && NF >= 3 { print $3 }' $corpus >"$work/one"
n1=$(wc -l <"$work/one")
reps=$(( (lines + n1 - 1) / n1 ))
i=0
while [ "$i" -lt "$reps" ]; do cat "$work/one"; i=$((i + 1)); done |
	head -n "$lines" >"$work/big"
head -n $((lines / 4)) "$work/big" >"$work/small"
head -n "$plines" "$work/big" >"$work/pair"

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
# The whole in-process report once (the regex-list baseline and memory).
taskset -c 0 build/release/bench/policy-bench "$secs" $corpus || status=1

# One pair: the in-process gate with vigil check's context and vigil
# check --stdin on file $1, at the same time on core 0; the gate runs
# until check has ended.  Prints "GATE_CPU_RATE CHECK_WALL_S CHECK_CPU_S
# CHECK_MAXRSS_KIB AUDITED".
run_pair() {
	: >"$work/inproc"
	POLICY_BENCH_CONTEXT_ONLY=1 POLICY_BENCH_UNTIL_SIGNAL=1 taskset -c 0 \
	    build/release/bench/policy-bench 1 $corpus >"$work/inproc" &
	bp=$!
	until grep -q '^ready' "$work/inproc"; do sleep 0.01; done
	set -- $(run_check "$1")
	kill -USR1 "$bp"
	wait "$bp" || true
	ic=$(awk -F: '/this process/ { n = split($0, a, " "); print a[n - 3] }' \
	    "$work/inproc")
	echo "$ic $*"
}

# Memory and completeness: the quarter and the whole input.
set -- $(run_check "$work/small")
small_rss=$3
set -- $(run_check "$work/big")
big_rss=$3
rows=$4
bigc=$(awk -v n="$lines" -v t="$2" 'BEGIN { printf "%.0f", n / t }')

# Pairs: both sides at once on one core; the target is judged on the
# medians.
ratios="" crates="" irates="" k=0
while [ "$k" -lt "$pairs" ]; do
	set -- $(run_pair "$work/pair")
	ic=$1
	c=$(awk -v n="$plines" -v t="$3" 'BEGIN { printf "%.0f", n / t }')
	[ "$5" -eq "$plines" ] || { echo "pair audit incomplete"; status=1; }
	r=$(awk -v a="$c" -v b="$ic" 'BEGIN { printf "%.3f", a / b }')
	echo "pair $((k + 1)): in-process $ic/CPU-s, check --stdin" \
	    "$c/CPU-s at the same time on the same core, ratio $r"
	ratios="$ratios $r" crates="$crates $c" irates="$irates $ic"
	k=$((k + 1))
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
    END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio=$(median $ratios)
cmed=$(median $crates)
imed=$(median $irates)
echo "in-process with vigil check's context, beside check: median $imed" \
	"commands per CPU second over $pairs pairs"
echo "vigil check --stdin, audit on, beside the gate: median $cmed commands" \
	"per CPU second over $pairs runs of $plines lines; median ratio to the" \
	"in-process gate of the same pair $ratio (target >= 0.8)"
echo "vigil check --stdin of $lines lines: $bigc commands per CPU second," \
	"$rows audited"
echo "check rss: $small_rss KiB peak for $((lines / 4)) lines," \
	"$big_rss KiB for $lines"
echo "load average: $(cut -d ' ' -f 1-3 /proc/loadavg)"
[ "$rows" -eq "$lines" ] || { echo "audit incomplete"; status=1; }
[ "$cmed" -ge 200000 ] || status=1
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8) }' || status=1
awk -v s="$small_rss" -v b="$big_rss" 'BEGIN { exit !(b <= s * 1.1 + 1024) }' ||
	{ echo "check memory grows with input"; status=1; }
exit "$status"

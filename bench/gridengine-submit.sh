#!/bin/sh
# gridengine-submit.sh [N] - an N-task sweep (default 1000) on a private
# Grid Engine cell of its own (tests/harness/sge-up, ports 16870/16871):
#
#   baseline  a loop of N `qsub -h -b y true` calls (held, so nothing
#             runs), what a script submitting one job per task does
#   vigil     `vigil run` of an N-task matrix (manifest load, policy gate,
#             store, one array job per max_aj_tasks), timed until every
#             task's job id is in the run's journal, then tracked to the
#             end; its debug log counts the qmaster calls (one qstat -xml
#             per poll, qacct only for jobs whose tasks left the queue)
#
# Both in the same run, on the same cell; prints both submission times,
# the ratio, and the qmaster calls per poll while tracking.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-1000}
VIGIL=${VIGIL:-$top/build/vigil}
W=$(mktemp -d /tmp/vigil-bench-XXXXXX)
chmod 0755 "$W"
VIGIL_HOME=$W/home
VIGIL_SGE_DIR=${VIGIL_SGE_DIR:-/tmp/vigil-sge-bench}
VIGIL_SGE_PORT=${VIGIL_SGE_PORT:-16870}
VIGIL_SGE_LEASE=$$
export VIGIL_HOME VIGIL_SGE_DIR VIGIL_SGE_PORT VIGIL_SGE_LEASE
vpid=
cleanup() {
	[ -z "$vpid" ] || kill "$vpid" 2>/dev/null || true
	"$top/tests/harness/sge-down" >/dev/null 2>&1
	rm -rf "$W"
}
# elapsed_ms T0: milliseconds since T0 (date +%s%N)
elapsed_ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
trap cleanup EXIT
"$top/tests/harness/sge-up" >"$W/env" || exit 1
. "$W/env"

# Baseline: one qsub per task, held.
t0=$(date +%s%N)
for _ in $(seq "$N"); do
	qsub -h -b y -N vg-bench-base -o /dev/null -j y true >/dev/null
done
base=$(elapsed_ms "$t0")
qdel -u root >/dev/null 2>&1 || true

python3 - "$N" >"$W/sweep.yaml" <<'P'
import sys
n = int(sys.argv[1])
print("version: 1\nname: bench-ge\nscheduler: gridengine")
print("matrix:\n  i: [" + ", ".join(str(i) for i in range(n)) + "]")
print("gridengine:\n  poll_min: 1s\n  poll_max: 5s")
print("command: \"true\"")
P
t0=$(date +%s%N)
VIGIL_DEBUG=1 "$VIGIL" run -q "$W/sweep.yaml" >"$W/out" 2>"$W/log" &
vpid=$!
# the clock stops when every job id is in the run's journal
until [ "$(cat "$VIGIL_HOME"/runs/*/gridengine/jobs 2>/dev/null |
    grep -c '^[0-9]')" -ge "$N" ]; do
	[ "$(elapsed_ms "$t0")" -lt 120000 ] ||
		{ echo "vigil: not all $N tasks submitted in 120 s" >&2; exit 1; }
	sleep 0.01
done
vig=$(elapsed_ms "$t0")
rc=0
wait "$vpid" || rc=$?
vpid=
total=$(elapsed_ms "$t0")
[ "$rc" = 0 ] || { echo "vigil run exited $rc" >&2; tail -n 5 "$W/log" >&2; exit 1; }
qsubs=$(grep -c 'gridengine: qsub -terse: ok' "$W/log" || true)
polls=$(grep -c 'gridengine: qstat -xml' "$W/log" || true)
qaccts=$(grep -c 'gridengine: qacct -j' "$W/log" || true)

echo "gridengine-submit: $N tasks"
echo "  baseline (qsub loop):    ${base} ms"
echo "  vigil submit:            ${vig} ms ($qsubs qsub call(s))"
awk -v b="$base" -v v="$vig" 'BEGIN { printf "  ratio:                   %.1fx\n", b / v }'
echo "  tracked to the end:      ${total} ms, $polls poll(s): $polls qstat + $qaccts qacct call(s)"
awk -v p="$polls" -v q="$qaccts" -v n="$N" 'BEGIN {
    printf "  calls per poll:          %.2f: 1 qstat (the qmaster'"'"'s) + %.2f qacct (reads the accounting file); a qstat -j per task would be %d\n", (p + q) / p, q / p, n }'

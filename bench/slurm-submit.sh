#!/bin/sh
# slurm-submit.sh [N] - submission wall time of an N-task sweep (default
# 1000) on the private Slurm cluster of tests/harness/slurm-up:
#
#   baseline  a loop of N `sbatch --parsable --hold --wrap true` calls,
#             what a script submitting one job per task does
#   vigil     `vigil submit` of an N-task matrix (manifest load, policy
#             gate, store, arrays chunked at MaxArraySize), until every
#             task's job id is in its run's job journal; then checks that
#             `vigil status` shows them all
#
# Both in the same run, on the same cluster; prints both times and the
# ratio (target >= 50).  Every job is cancelled afterwards.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-1000}
. "$top/bench/lib/slurm.sh"
cleanup() {
	scancel --name=vg-bench-base >/dev/null 2>&1 || true
	slurm_bench_cleanup
}
trap cleanup EXIT
env=$("$top/tests/harness/slurm-up") || exit 1
eval "$env"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Baseline: one sbatch per task (held, so the queue does not run them).
start=$(now_ms)
i=0
while [ $i -lt "$N" ]; do
	sbatch --parsable --hold -J vg-bench-base -o /dev/null \
	    --wrap true >/dev/null
	i=$((i + 1))
done
base=$(( $(now_ms) - start ))
scancel --name=vg-bench-base

# vigil: one manifest, N tasks.
python3 - "$N" >"$W/sweep.yaml" <<'P'
import sys
n = int(sys.argv[1])
print("version: 1\nname: bench-submit\nscheduler: slurm")
print("matrix:\n  i: [" + ", ".join(str(i) for i in range(n)) + "]")
print("command: \"true\"")
P
# vigil writes each job id to RUN_DIR/slurm/jobs the moment sbatch
# returns it (before the run's database records it): the clock stops when
# all N are there.  Checking the file costs nothing, unlike `vigil status`.
start=$(now_ms)
id=$("$VIGIL" submit "$W/sweep.yaml")
journal=$VIGIL_HOME/runs/$id/slurm/jobs
while :; do
	got=$(cat "$journal" 2>/dev/null | wc -l)
	[ "$got" -lt "$N" ] || break
	[ $(( $(now_ms) - start )) -lt 120000 ] ||
		{ echo "vigil: only $got of $N tasks submitted" >&2; exit 1; }
	sleep 0.01
done
vig=$(( $(now_ms) - start ))
dpid=$("$VIGIL" status "$id" --json | python3 -c 'import json,sys
print(json.load(sys.stdin)["pid"] or "")')
# And the database agrees (not timed: status of 1000 tasks takes a while).
i=0
until [ "$("$VIGIL" status "$id" --json | python3 -c 'import json,sys
print(sum(1 for t in json.load(sys.stdin)["tasks"] if t["job_id"]))')" -ge "$N" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "job ids not recorded" >&2; exit 1; }
	sleep 0.2
done
scripts=$(ls "$VIGIL_HOME/runs/$id/slurm/" | grep -c '^submit-')

echo "slurm-submit: $N tasks"
echo "  baseline (sbatch loop):  ${base} ms"
echo "  vigil submit:            ${vig} ms ($scripts sbatch call(s))"
awk -v b="$base" -v v="$vig" 'BEGIN { printf "  ratio:                   %.1fx (target >= 50x)\n", b / v }'

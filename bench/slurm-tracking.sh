#!/bin/sh
# slurm-tracking.sh [SECONDS] [N] - the load vigil puts on Slurm while it
# tracks N tasks (default 1000) for SECONDS (default 300), read from the
# daemons' own RPC counters: sdiag (slurmctld: job info, submit, kill,
# config and partition requests) and `sacctmgr show stats` (slurmdbd:
# DBD_GET_JOBS_COND, one per sacct call).  Polls are counted from vigil's
# debug log (one "slurm: query" line per Slurm call).  Prints the counts,
# calls per poll (target <= 1) and calls per second (target <= 0.5).
#   bench/slurm-tracking.sh 60     a one-minute variant
#   SLURM_TRACK_SECS=60 make bench  the same, through the environment
#   MODE=noacct bench/slurm-tracking.sh   tracking through squeue
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-${SLURM_TRACK_SECS:-300}}
N=${2:-${SLURM_TRACK_TASKS:-1000}}
. "$top/bench/lib/slurm.sh"
VIGIL_DEBUG=1
export VIGIL_DEBUG
trap slurm_bench_cleanup EXIT
if [ "${MODE:-}" = noacct ]; then
	env=$("$top/tests/harness/slurm-up" --no-accounting) || exit 1
else
	env=$("$top/tests/harness/slurm-up") || exit 1
fi
eval "$env"

# ctld: the calls vigil can make to slurmctld; dbd: sacct's query.
ctld_calls() {
	sdiag | awk '/by message type/ { on = 1 } /by user/ { on = 0 }
	    on && /REQUEST_(JOB_INFO|SUBMIT_BATCH_JOB|KILL_JOB|CANCEL_JOB|BUILD_INFO|PARTITION_INFO)[ (]/ {
		sub(/.*count:/, ""); n += $1 } END { print n + 0 }'
}
dbd_calls() {
	if [ "$VIGIL_SLURM_ACCOUNTING" = 1 ]; then
		sacctmgr show stats | awk '/by message type/ { on = 1 }
		    /by user/ { on = 0 } on && /DBD_GET_JOBS_COND/ {
			sub(/.*count:/, ""); n += $1 } END { print n + 0 }'
	else
		echo 0
	fi
}
polls() { grep -c 'slurm: query:' "$1" 2>/dev/null || true; }

python3 - "$N" >"$W/track.yaml" <<'P'
import sys
n = int(sys.argv[1])
print("version: 1\nname: bench-track\nscheduler: slurm")
print("matrix:\n  i: [" + ", ".join(str(i) for i in range(n)) + "]")
print("command: sleep 3600")
P
c0=$(ctld_calls); d0=$(dbd_calls)
id=$("$VIGIL" submit "$W/track.yaml")
log=$VIGIL_HOME/runs/$id/vigil.log
i=0
until [ "$("$VIGIL" status "$id" --json | python3 -c 'import json,sys
print(sum(1 for t in json.load(sys.stdin)["tasks"] if t["job_id"]))')" -ge "$N" ]; do
	i=$((i + 1)); [ $i -lt 1200 ] || { echo "submission failed" >&2; exit 1; }
	sleep 0.1
done
dpid=$("$VIGIL" status "$id" --json | python3 -c 'import json,sys
print(json.load(sys.stdin)["pid"] or "")')
# The window: from all tasks submitted, for SECS seconds.
c1=$(ctld_calls); d1=$(dbd_calls); p1=$(polls "$log")
sleep "$SECS"
c2=$(ctld_calls); d2=$(dbd_calls); p2=$(polls "$log")
# sdiag and sacctmgr count their own calls too; subtract them (each
# sdiag is one REQUEST_STATS_INFO, not counted above; sacctmgr talks to
# slurmdbd only with DBD_GET_STATS, not counted either).
calls=$(( (c2 - c1) + (d2 - d1) ))
npolls=$(( p2 - p1 ))
echo "slurm-tracking: $N tasks tracked for ${SECS}s ($(
	[ "$VIGIL_SLURM_ACCOUNTING" = 1 ] && echo sacct || echo squeue))"
echo "  submission:      $(( c1 - c0 )) slurmctld call(s), $(( d1 - d0 )) slurmdbd"
echo "  slurmctld calls: $(( c2 - c1 ))"
echo "  slurmdbd calls:  $(( d2 - d1 )) (DBD_GET_JOBS_COND)"
echo "  vigil polls:     $npolls"
awk -v c="$calls" -v p="$npolls" -v s="$SECS" 'BEGIN {
	printf "  calls per poll:  %.2f (target <= 1)\n", (p > 0) ? c / p : c
	printf "  calls per second: %.3f (target <= 0.5)\n", c / s }'

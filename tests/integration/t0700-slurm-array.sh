#!/bin/sh
# A 6-task matrix on the private Slurm cluster, as one job array with
# throttle 2, once through the commands and once through libslurm:
# exit statuses, job ids "JOB_INDEX", job name = run id, at most two
# elements at once (from sacct's start and end times), logs.
set -u
. "$(dirname "$0")/slurm-lib.sh"

for iface in cli lib; do
	cat >"$W/a.yaml" <<Y
version: 1
name: arr-$iface
scheduler: slurm
matrix:
  i: [0, 1, 2, 3, 4, 5]
slurm:
  interface: $iface
  array_parallelism: 2
  poll_min: 1s
  poll_max: 3s
command: |
  echo "task \${{ matrix.i }} attempt \$VIGIL_ATTEMPT"
  sleep 1
  [ \${{ matrix.i }} -ne 1 ] || exit 3
Y
	"$VIGIL" run -q "$W/a.yaml" >"$W/out" 2>&1
	expect_eq "$iface: exit status" 1 $?
	id=$(last_run)
	expect_eq "$iface: states" \
	    "SUCCEEDED FAILED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
	    "$(states "$id")"
	expect_eq "$iface: exit codes" "0 3 0 0 0 0" \
	    "$(jq_run "$id" '" ".join(str(t["exit_code"]) for t in d["tasks"])')"
	jobs=$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')
	job=${jobs%%_*}
	expect_eq "$iface: job ids" \
	    "${job}_0 ${job}_1 ${job}_2 ${job}_3 ${job}_4 ${job}_5" "$jobs"
	expect_eq "$iface: logs" "task 4 attempt 1" "$("$VIGIL" logs "$id/4")"
	# One sbatch for the whole matrix; every element named after the run.
	expect_eq "$iface: job names" "$id" "$(sacct -X -n -P -j "$job" \
	    -o JobName | sort -u)"
	# slurmdbd may record the last end a moment after vigil saw it.
	n=0
	while [ "$(sacct -X -n -P -j "$job" -o End | grep -c '^[0-9]')" -lt 6 ] &&
	    [ $n -lt 50 ]; do
		sleep 0.2; n=$((n + 1))
	done
	expect_eq "$iface: elements" 6 "$(sacct -X -n -P -j "$job" -o JobID |
	    wc -l)"
	# Throttle: never more than two elements running at one time.
	sacct -X -n -P -j "$job" -o Start,End >"$W/times"
	max=$(python3 - "$W/times" <<'P'
import sys, datetime
ev = []
for line in open(sys.argv[1]):
    s, e = line.strip().split("|")
    f = lambda x: datetime.datetime.fromisoformat(x).timestamp()
    ev += [(f(s), 1), (f(e), -1)]
cur = top = 0
for _, d in sorted(ev, key=lambda x: (x[0], x[1])):
    cur += d; top = max(top, cur)
print(top)
P
)
	[ "$max" -le 2 ] || fail "$iface: $max elements ran at once (throttle 2)"
	grep -q '^#SBATCH --array=0-5%2$' "$VIGIL_HOME/runs/$id/slurm/submit-1.sh" ||
	    fail "$iface: script: $(cat "$VIGIL_HOME/runs/$id/slurm/submit-1.sh")"
	[ -f "$VIGIL_HOME/runs/$id/slurm/${job}_5.out" ] ||
	    fail "$iface: no Slurm output file in the run directory"
done
pass

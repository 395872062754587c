#!/bin/sh
# vigil cancel of a run whose tasks run and wait as Slurm array elements:
# every element is cancelled in Slurm (one scancel), the tasks end
# CANCELLED, and the reason names who cancelled (from sacct).
set -u
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/c.yaml" <<'Y'
version: 1
name: can
scheduler: slurm
matrix:
  i: [0, 1, 2]
resources:
  cpus: 1
slurm:
  poll_min: 1s
  poll_max: 2s
command: sleep 300
Y
"$VIGIL" run -q "$W/c.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 2 30
job=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
job=${job%%_*}
"$VIGIL" cancel "$id" >"$W/o" 2>&1 || fail "cancel: $(cat "$W/o")"
wait $vpid
expect_eq "run exit status" 5 $?
expect_eq "states" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"
# Slurm agrees: nothing of the array is left running or pending.
expect_eq "slurm states" "CANCELLED" "$(sacct -X -n -P -j "$job" -o State |
    sed 's/ by .*//' | sort -u)"
expect_eq "squeue" "" "$(squeue -h -j "$job" -t pending,running 2>/dev/null)"
pass

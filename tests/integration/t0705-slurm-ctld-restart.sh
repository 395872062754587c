#!/bin/sh
# slurmctld restarts while vigil tracks running jobs, through squeue
# (which fails while the controller is down): no task is reported failed
# or lost, and all succeed once the controller is back.
set -u
SLURM_UP_ARGS=--no-accounting
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/r.yaml" <<'Y'
version: 1
name: restart
scheduler: slurm
matrix:
  i: [0, 1]
slurm:
  interface: cli
  poll_min: 1s
  poll_max: 2s
command: sleep 12
Y
"$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 2 30
"$harness/slurm-up" --no-accounting --restart-controller >/dev/null ||
    fail "controller restart failed"
wait $vpid
expect_eq "exit status: $(cat "$W/out")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED" "$(states "$id")"
for t in 0 1; do
	"$VIGIL" status "$id/$t" >"$W/h"
	grep -Eq 'FAILED|LOST' "$W/h" && fail "false failure: $(cat "$W/h")"
done
pass

#!/bin/sh
# slurmctld of the three-node cluster stopped (SIGTERM) and started again
# while three tasks run on three nodes: no task fails or is LOST, each
# succeeds at its first attempt.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/r.yaml" ctld-restart 3 "sleep 15"
"$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 3 60
# Not within 2 s of the starts: a kill that early can lose a start
# (docs/schedulers/slurm.md).
sleep 3
"$harness/slurm-cluster-up" --restart-controller >/dev/null ||
	fail "slurmctld did not come back"
wait "$vpid"
expect_eq "vigil exit status: $(cat "$W/out")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "attempts" "1 1 1" "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
pass

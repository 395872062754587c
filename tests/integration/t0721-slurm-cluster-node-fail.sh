#!/bin/sh
# NODE_FAIL on the three-node cluster: three one-CPU tasks run, one per
# node; the slurmd of task 0's node and every process of its namespace
# (slurmstepd, task-exec, the task) are killed.  Attempt 1 of task 0 is
# recorded NODE_FAIL within 60 s (Slurm marks the node DOWN after
# SlurmdTimeout=10 s; measured 15-25 s here, the time is printed), the
# retry (retry.on node_fail) is submitted with the failed node in
# --exclude and runs elsewhere, and the tasks on the other nodes succeed
# at their first attempt.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/nf.yaml" nodefail 3 \
    'if [ "$VIGIL_ATTEMPT" = 1 ]; then sleep 45; else sleep 1; fi' \
    "retry: {max: 1, on: [node_fail], backoff: 0}"
"$VIGIL" run -q "$W/nf.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 3 60
node=$(jq_run "$id" 'd["tasks"][0]["node"]')
case "$node" in node[123]) ;; *) fail "task 0 runs on '$node'" ;; esac
kill_node "$node" "$id/0" 60
wait "$vpid"
expect_eq "vigil exit status: $(cat "$W/out")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "attempts" "2 1 1" "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
retry_node=$(jq_run "$id" 'd["tasks"][0]["node"]')
[ "$retry_node" != "$node" ] || fail "the retry ran on the failed node $node"
grep -qx "#SBATCH --exclude=$node" "$VIGIL_HOME/runs/$id/slurm/submit-2.sh" ||
	fail "retry without --exclude=$node: $(cat "$VIGIL_HOME/runs/$id/slurm/submit-2.sh")"
pass

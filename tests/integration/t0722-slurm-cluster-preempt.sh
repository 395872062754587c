#!/bin/sh
# Preemption on the three-node cluster: three one-CPU tasks of a run in
# the low partition fill the nodes; a job submitted to the high partition
# (PriorityTier 10, PreemptMode=REQUEUE) preempts one of them.  vigil
# submits with --no-requeue (slurm.requeue false), so Slurm ends that
# job PREEMPTED: the attempt is recorded PREEMPTED (the time is printed),
# retried per retry.on once the high job is done, and the other tasks
# succeed at their first attempt.  With slurm.requeue: true Slurm
# requeues it instead and the same attempt runs again.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/p.yaml" preempt 3 \
    'if [ "$VIGIL_ATTEMPT" = 1 ]; then sleep 25; else sleep 1; fi' \
    "retry: {max: 1, on: [preempted], backoff: 0}" "partition: low"
"$VIGIL" run -q "$W/p.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 3 60
t0=$(date +%s)
hi=$(sbatch --parsable -p high -n1 -o /dev/null --wrap 'sleep 5') ||
	fail "cannot submit to the high partition"
i=0
until [ "$(jq_run "$id" 'sum(1 for t in d["tasks"] if t["attempts"] == 2 or "PREEMPTED" in (t["reason"] or ""))')" = 1 ]; do
	i=$((i + 1))
	[ $i -lt 60 ] || fail "nothing preempted after 60 s: $("$VIGIL" status "$id")"
	sleep 1
done
echo "PREEMPTED recorded $(( $(date +%s) - t0 )) s after job $hi was submitted"
wait "$vpid"
expect_eq "vigil exit status: $(cat "$W/out")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "attempts (sorted)" "1 1 2" "$(jq_run "$id" '" ".join(sorted(str(t["attempts"]) for t in d["tasks"]))')"
k=$(jq_run "$id" '[t["index"] for t in d["tasks"] if t["attempts"] == 2][0]')
"$VIGIL" status "$id/$k" | grep -q 'attempt 1  PREEMPTED' ||
	fail "attempt 1 of task $k not PREEMPTED: $("$VIGIL" status "$id/$k")"
expect_eq "high job" COMPLETED "$(sacct_get "$hi" State)"

# slurm.requeue: true: Slurm requeues the preempted element under the
# same job id and starts it again once cred_expire (30 s) + 1 s passed;
# vigil sees it QUEUED again, then RUNNING, within the same attempt.
slurm_yaml "$W/q.yaml" requeue 3 "sleep 12" "" "partition: low" \
    "requeue: true"
"$VIGIL" run -q "$W/q.yaml" >"$W/out" 2>&1 &
vpid=$!
sleep 1
id=$(wait_run)
wait_count "$id" RUNNING 3 60
t0=$(date +%s)
hi=$(sbatch --parsable -p high -n1 -o /dev/null --wrap 'sleep 3') ||
	fail "cannot submit to the high partition"
wait "$vpid"
expect_eq "requeue: vigil exit status: $(cat "$W/out")" 0 $?
echo "requeued element done $(( $(date +%s) - t0 )) s after job $hi was submitted"
expect_eq "requeue: states" "SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "requeue: attempts" "1 1 1" "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
job=$(jq_run "$id" 'd["tasks"][0]["job_id"].split("_")[0]')
expect_eq "requeue: sacct -D" "PREEMPTED COMPLETED COMPLETED COMPLETED" \
    "$(sacct -D -X -n -P -j "$job" -o State | sort -r | uniq -c | awk '{ for (i = 0; i < $1; i++) printf "%s ", $2 }' | sed 's/ $//')"
pass

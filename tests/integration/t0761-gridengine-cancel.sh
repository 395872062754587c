#!/bin/sh
# vigil cancel on Grid Engine: RUN/TASK takes one task of the array
# (qdel JOB -t I) and leaves the others running; cancelling the run then
# takes the rest with one qdel of the job, running and pending tasks
# alike; every task ends CANCELLED and nothing of the job stays in the
# queue.  The cell has as many slots as CPUs, so with 4 tasks at least 2
# wait pending on this 2-CPU host.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

ge_yaml "$W/c.yaml" can 4 "sleep 300"
VIGIL_DEBUG=1 "$VIGIL" run -q "$W/c.yaml" >"$W/out" 2>"$W/err" &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 1 60
handle=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
job=${handle%%.*}
"$VIGIL" cancel "$id/0" >"$W/o" 2>&1 || fail "cancel task: $(cat "$W/o")"
wait_count "$id" CANCELLED 1 30
expect_eq "task 0" CANCELLED "$(jq_run "$id" 'd["tasks"][0]["state"]')"
grep -q "gridengine: qdel $job" "$W/err" || fail "no qdel: $(cat "$W/err")"
[ -n "$(qstat -u root | awk -v j="$job" '$1 == j')" ] ||
	fail "the other tasks left the queue too"
"$VIGIL" cancel "$id" >"$W/o" 2>&1 || fail "cancel: $(cat "$W/o")"
wait $vpid
expect_eq "run exit status" 5 $?
expect_eq "states" "CANCELLED CANCELLED CANCELLED CANCELLED" "$(states "$id")"
expect_eq "qdel calls" 2 "$(grep -c 'gridengine: qdel' "$W/err")"
expect_eq "queue" "" "$(qstat -u root | awk -v j="$job" '$1 == j')"
pass

#!/bin/sh
# A sweep on Grid Engine is one array job (one qsub, -t 1-N): every task
# runs once with its own index and sees its SGE_TASK_ID, exit statuses
# come back exactly as the command returned them (a failing task keeps
# its 7, Grid Engine's accounting agrees), and the alias `sge` names the
# same scheduler.
# Without a reachable cell the run stops before submitting, saying why.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

ge_yaml "$W/a.yaml" sweep 5 \
    "'echo \"i=\${{ matrix.i }} task=\$SGE_TASK_ID\" >$W/out-\${{ matrix.i }}; test \${{ matrix.i }} != 3 || exit 7'" \
    "isolation:
  writable: [\"$W\"]"
VIGIL_DEBUG=1 "$VIGIL" run -q "$W/a.yaml" >"$W/out" 2>"$W/err"
expect_eq "exit status: $(cat "$W/out" "$W/err")" 1 $?
id=$(last_run)
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED FAILED SUCCEEDED" \
    "$(states "$id")"
expect_eq "exit codes" "0 0 0 7 0" \
    "$(jq_run "$id" '" ".join(str(t["exit_code"]) for t in d["tasks"])')"
# task-exec passes the job's variables on (the scheduler's task_env):
# task i is Grid Engine task i+1.
for i in 0 1 2 3 4; do
	expect_eq "task $i" "i=$i task=$((i + 1))" "$(cat "$W/out-$i")"
done
expect_eq "one qsub" 1 "$(grep -c 'gridengine: qsub -terse: ok' "$W/err")"
expect_eq "one script" 1 \
    "$(ls "$VIGIL_HOME/runs/$id/gridengine/" | grep -c '^submit-')"
expect_eq "journal" 5 "$(grep -c '^[0-9]' "$VIGIL_HOME/runs/$id/gridengine/jobs")"
handle=$(jq_run "$id" 'd["tasks"][3]["job_id"]')
job=${handle%%.*}
expect_eq "handle" "$job.4" "$handle"
expect_eq "qacct exit status of task 4" 7 "$(qacct_get "$job" 4 exit_status)"
# never one qstat per task: at most one per poll
polls=$(grep -c 'gridengine: qstat -xml' "$W/err")
[ "$polls" -ge 1 ] || fail "no qstat call"

# The alias: scheduler sge, section sge:.
printf 'version: 1\nname: alias\nscheduler: sge\nsge:\n  poll_min: 1s\ncommand: "exit 0"\n' >"$W/s.yaml"
"$VIGIL" run -q "$W/s.yaml" >"$W/out" 2>&1 || fail "sge alias: $(cat "$W/out")"
expect_eq "alias state" SUCCEEDED "$(states "$(last_run)")"
# No cell: the run stops before anything is submitted, naming why.
SGE_ROOT=$W/nocell "$VIGIL" run -q "$W/s.yaml" >"$W/out" 2>&1
expect_eq "no cell exit status" 4 $?
expect_eq "no cell message" "vigil: gridengine: cannot read the cell's configuration: 'qconf' exited 1: error: SGE_ROOT directory \"$W/nocell\" doesn't exist" \
    "$(cat "$W/out")"
pass

#!/bin/sh
# Limits Grid Engine enforces come back as vigil states: a task over its
# resources.time is killed by the cell (-l h_rt; qacct: failed 37,
# exit_status 137) and ends TIMEOUT, with the reason from qacct; a task
# that ends by itself within its limit keeps its exit status.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

ge_yaml "$W/t.yaml" limits 2 \
    "'if [ \${{ matrix.i }} = 0 ]; then sleep 60; else exit 3; fi'" "" \
    "time: 5s"
"$VIGIL" run -q "$W/t.yaml" >"$W/out" 2>&1
expect_eq "exit status: $(cat "$W/out")" 1 $?
id=$(last_run)
expect_eq "states" "TIMEOUT FAILED" "$(states "$id")"
expect_eq "exit code of the other" 3 "$(jq_run "$id" 'd["tasks"][1]["exit_code"]')"
reason=$(jq_run "$id" 'd["tasks"][0]["reason"]')
case "$reason" in
*"failed 37: qmaster enforced h_rt"*) ;;
*) fail "reason: $reason" ;;
esac
handle=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
expect_eq "qacct failed" "37 : qmaster enforced h_rt, h_cpu, or h_vmem limit" \
    "$(qacct_get "${handle%%.*}" 1 failed)"
pass

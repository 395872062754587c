#!/bin/sh
# resources.time of one minute reached: Slurm kills the task (after the
# --signal warning) and the task ends TIMEOUT, not FAILED.
set -u
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/t.yaml" <<'Y'
version: 1
name: tmo
scheduler: slurm
resources:
  time: 1m
slurm:
  signal: "B:USR2@30"
  poll_min: 2s
  poll_max: 10s
command: |
  trap 'echo warned' USR2
  i=0
  while [ $i -lt 600 ]; do sleep 1; i=$((i + 1)); done
Y
start=$(date +%s)
"$VIGIL" run -q "$W/t.yaml" >"$W/out" 2>&1
expect_eq "exit status" 1 $?
took=$(( $(date +%s) - start ))
id=$(last_run)
expect_eq "state" TIMEOUT "$(states "$id")"
reason=$(jq_run "$id" 'd["tasks"][0]["reason"]')
case "$reason" in
*"reached its Slurm time limit"*) ;;
*) fail "reason: $reason" ;;
esac
[ $took -ge 55 ] && [ $took -le 200 ] || fail "took ${took}s for a 1 minute limit"
# The checkpoint warning reached the task.
grep -q '^warned$' "$VIGIL_HOME/runs/$id/tasks/0/stdout" ||
    fail "no USR2 warning: $(cat "$VIGIL_HOME/runs/$id/tasks/0/stdout")"
pass

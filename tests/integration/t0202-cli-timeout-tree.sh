#!/bin/sh
# A timed-out task whose tree ignores SIGTERM and escaped with setsid is
# still killed entirely (SIGKILL after kill_grace); the result is TIMEOUT.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/t.yaml" <<Y
version: 1
name: tree
command: |
  trap '' TERM
  setsid sh -c 'trap "" TERM; echo \$\$ > $W/escaped.pid; exec sleep 120' &
  sleep 120
timeout: 1s
kill_grace: 1s
isolation:
  writable: ["$W"]
Y
start=$(date +%s)
"$VIGIL" run -q "$W/t.yaml"
expect_eq "exit status" 1 $?
took=$(( $(date +%s) - start ))
[ $took -lt 10 ] || fail "took ${took}s"
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
expect_eq "state" TIMEOUT "$(jq_run "$id" 'd["tasks"][0]["state"]')"
expect_eq "reason" "timed out after 1s" "$(jq_run "$id" 'd["tasks"][0]["reason"]')"
[ -s "$W/escaped.pid" ] || fail "grandchild never started"
# The grandchild's pid is one of the task's PID namespace; look for any
# process of the run instead.
expect_eq "processes left" 0 "$(run_procs "$id")"
pass

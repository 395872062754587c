#!/bin/sh
# kill -9 of vigil in the middle of a run, then vigil resume: no task is
# lost, no finished task runs again, the interrupted ones run again (their
# orphaned processes killed first) without counting against retry.max.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/k.yaml" <<Y
version: 1
name: k9
matrix:
  s: ["0.1", "0.2", "30", "31"]
isolation:
  writable: ["$W"]
command: |
  echo start >> $W/start-\$VIGIL_TASK_INDEX
  # Only the first attempt is slow.
  [ "\$VIGIL_ATTEMPT" = 1 ] && sleep \${{ matrix.s }}
  echo done >> $W/done-\$VIGIL_TASK_INDEX
Y
"$VIGIL" run --jobs 2 "$W/k.yaml" >/dev/null 2>&1 &
vpid=$!
# Wait until the two slow tasks run (both fast ones are done by then).
i=0
while [ ! -e "$W/start-3" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -e "$W/start-3" ] || fail "slow tasks never started"
sleep 0.3
kill -9 $vpid
wait $vpid 2>/dev/null
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
expect_eq "state after kill -9" INTERRUPTED "$(jq_run "$id" 'd["state"]')"
expect_eq "states after kill -9" "SUCCEEDED SUCCEEDED RUNNING RUNNING" \
    "$(jq_run "$id" '" ".join(t["state"] for t in d["tasks"])')"
# The orphans of the killed vigil are still running.
[ "$(run_procs "$id")" -gt 0 ] || fail "orphaned tasks not running"

"$VIGIL" resume -q "$id"
expect_eq "resume exit status" 0 $?
expect_eq "states after resume" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
    "$(jq_run "$id" '" ".join(t["state"] for t in d["tasks"])')"
expect_eq "attempts" "1 1 2 2" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
# Finished tasks ran once; every task finished exactly once (the orphans
# were killed before they could finish too).
for t in 0 1; do expect_eq "start-$t" 1 "$(wc -l <"$W/start-$t")"; done
for t in 2 3; do expect_eq "start-$t" 2 "$(wc -l <"$W/start-$t")"; done
expect_eq "leftover processes" 0 "$(run_procs "$id")"
for t in 0 1 2 3; do expect_eq "done-$t" 1 "$(wc -l <"$W/done-$t")"; done
"$VIGIL" status "$id/2" >"$W/h"
grep -q "attempt 1  LOST .*interrupted: vigil exited" "$W/h" ||
    fail "history: $(cat "$W/h")"
pass

#!/bin/sh
# Cancelling: SIGINT to vigil run (exit 5, tasks CANCELLED), vigil cancel
# RUN/TASK (one task), vigil cancel of a run whose vigil was killed.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/c.yaml" <<'Y'
version: 1
name: can
matrix:
  i: [0, 1, 2]
command: sleep 60
# Three sleepers at once whatever the host's CPU count: each task takes
# one CPU of the pool.
pool:
  cpus: 3
Y
last() { "$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'; }
states() { jq_run "$1" '" ".join(t["state"] for t in d["tasks"])'; }
wait_running() {
	i=0
	while [ $i -lt 100 ]; do
		id=$(last 2>/dev/null) && [ -n "$id" ] &&
		    [ "$(jq_run "$id" 'd["counts"]["RUNNING"]')" -ge "$1" ] &&
		    return 0
		sleep 0.1; i=$((i+1))
	done
	fail "tasks never started"
}

# 1. SIGINT to a foreground run.
"$VIGIL" run -q --jobs 2 "$W/c.yaml" & vpid=$!
wait_running 2
kill -INT $vpid
wait $vpid
expect_eq "SIGINT exit status" 5 $?
id=$(last)
expect_eq "SIGINT states" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"
expect_eq "SIGINT run" CANCELLED "$(jq_run "$id" 'd["state"]')"

# 2. One task.
"$VIGIL" run -q --jobs 3 "$W/c.yaml" & vpid=$!
wait_running 3
id=$(last)
"$VIGIL" cancel "$id/1" >"$W/o" || fail "cancel task: $(cat "$W/o")"
expect_eq "cancel output" "$id/1: cancelling (vigil process $vpid)
$id/1: cancelled" "$(cat "$W/o")"
expect_eq "one cancelled" "RUNNING CANCELLED RUNNING" "$(states "$id")"
"$VIGIL" cancel "$id" >/dev/null || fail "cancel run"
wait $vpid
expect_eq "run exit status" 5 $?

# 3. The run's vigil is gone: cancel kills the leftovers itself.
"$VIGIL" run -q --jobs 3 "$W/c.yaml" & vpid=$!
wait_running 3
id=$(last)
kill -9 $vpid; wait $vpid 2>/dev/null
[ "$(run_procs "$id")" -gt 0 ] || fail "no leftovers to kill"
"$VIGIL" cancel "$id" >"$W/o"
expect_eq "orphan cancel" "$id: cancelled (no vigil was driving it; leftover processes killed)" "$(cat "$W/o")"
expect_eq "orphan states" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"
expect_eq "leftovers" 0 "$(run_procs "$id")"
"$VIGIL" cancel "$id" >"$W/o"
expect_eq "cancel twice" "$id: already ended (CANCELLED), nothing to cancel" "$(cat "$W/o")"
pass

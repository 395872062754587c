#!/bin/sh
# A Slurm run whose vigil was killed (kill -9) while its jobs are still
# running or queued holds its concurrency group: a cron run of the same
# group records SKIPPED naming it, silently; with overlap replace the
# orphan's jobs are scancelled (its tasks end CANCELLED) and the new run
# goes ahead.  Against the private Slurm cluster of slurm-lib.sh.
set -u
. "$(dirname "$0")/slurm-lib.sh"

start_sleepers nightly
kill -9 $vpid
wait $vpid 2>/dev/null
live() { squeue -h -r -j "$1" -t pending,running -o '%K %T' 2>/dev/null | sort; }
[ -n "$(live "$job")" ] || fail "the dead run's jobs are gone already"

sed 's/command: sleep 300/command: "true"/; s/i: \[0, 1, 2\]/i: [0]/' \
    "$W/c.yaml" >"$W/c2.yaml"
"$VIGIL" run --cron "$W/c2.yaml" >"$W/o" 2>"$W/e"
expect_eq "skip: exit" 0 $?
expect_eq "skip: silent" "0 0" "$(wc -c <"$W/o") $(wc -c <"$W/e")"
sk=$(last_run)
expect_eq "skip: state" SKIPPED "$(jq_run "$sk" 'd["state"]')"
expect_eq "skip: holder" "$id" "$(jq_run "$sk" 'd["holder"]')"
"$VIGIL" status "$sk" | grep -q "^reason: held by run $id (its vigil is gone; its slurm jobs may still run)" ||
    fail "skip reason: $("$VIGIL" status "$sk")"

"$VIGIL" run --cron --set concurrency.overlap=replace \
    --set concurrency.wait=60s "$W/c2.yaml" >"$W/o" 2>"$W/e"
expect_eq "replace: exit" 0 $?
expect_eq "replace: silent" 0 "$(wc -c <"$W/e")"
expect_eq "replaced run" CANCELLED "$(jq_run "$id" 'd["state"]')"
expect_eq "replaced tasks" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"
expect_eq "its jobs" "" "$(live "$job")"
new=$(last_run)
expect_eq "new run" SUCCEEDED "$(jq_run "$new" 'd["state"]')"
pass

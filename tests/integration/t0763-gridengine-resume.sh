#!/bin/sh
# kill -9 of vigil while its Grid Engine tasks run, then vigil resume:
# it re-attaches to the same jobs (by the store's handles, by the
# journal for a vigil killed between the journal and its store, and by
# the chunk's intent line and qstat for one killed between qsub and the
# journal), submits nothing twice, and every task runs once.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

ge_yaml "$W/r.yaml" res 4 "'echo run >>$W/ran-\${{ matrix.i }}; sleep 5'" \
    "isolation:
  writable: [\"$W\"]"
"$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 1 60
before=$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')
kill -9 $vpid
wait $vpid 2>/dev/null
"$VIGIL" resume -q "$id" >"$W/o" 2>&1
expect_eq "resume exit status: $(cat "$W/o")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "same jobs" "$before" \
    "$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')"
for t in 0 1 2 3; do expect_eq "ran-$t" 1 "$(wc -l <"$W/ran-$t")"; done
expect_eq "scripts" 1 \
    "$(ls "$VIGIL_HOME/runs/$id/gridengine/" | grep -c '^submit-')"

# Killed after the journal got the job ids, before the store did.
rm -f "$W"/ran-*
VIGIL_GRIDENGINE_KILL_AT=journal "$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1
id2=$(last_run)
[ "$id2" != "$id" ] || fail "no second run"
"$VIGIL" resume -q "$id2" >"$W/o" 2>&1
expect_eq "resume after journal exit status: $(cat "$W/o")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id2")"
for t in 0 1 2 3; do expect_eq "ran-$t once" 1 "$(wc -l <"$W/ran-$t")"; done
expect_eq "one script" 1 \
    "$(ls "$VIGIL_HOME/runs/$id2/gridengine/" | grep -c '^submit-')"

# Killed after qsub took the chunk, before its job id reached the
# journal: the intent line and qstat find the job.
rm -f "$W"/ran-*
VIGIL_GRIDENGINE_KILL_AT=qsub "$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1
id3=$(last_run)
[ "$id3" != "$id2" ] || fail "no third run"
j3=$VIGIL_HOME/runs/$id3/gridengine/jobs
expect_eq "only the intent journaled" "intent" "$(cut -d' ' -f1 "$j3" | sort -u)"
"$VIGIL" resume -q "$id3" >"$W/o" 2>&1
expect_eq "resume after qsub exit status: $(cat "$W/o")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id3")"
for t in 0 1 2 3; do expect_eq "ran-$t once" 1 "$(wc -l <"$W/ran-$t")"; done
expect_eq "one script" 1 \
    "$(ls "$VIGIL_HOME/runs/$id3/gridengine/" | grep -c '^submit-')"
expect_eq "job lines" 4 "$(grep -c '^[0-9]' "$j3")"
pass

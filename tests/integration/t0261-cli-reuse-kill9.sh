#!/bin/sh
# kill -9 of vigil while tasks of a reuse: true run are in flight: the
# tasks that ended before have results kept, the interrupted ones none
# (an entry is committed with the end of its attempt, after its files
# are in place), so the next run reuses only what finished; resume
# finishes the run and keeps the rest.
set -u
. "$(dirname "$0")/engine-lib.sh"

mkdir "$W/wd" && cd "$W/wd" || fail "no work dir"
# Tasks 2 and 3 sleep in their first attempt only; each task appends a
# line to a file of its own when it starts and when it ends.
cat >k.yaml <<Y
version: 1
name: k9r
reuse: true
isolation: {writable: ["$W"]}
matrix: {s: ["0", "0.0", "30", "30.0"]}
command: >-
  echo start >> $W/start-\$VIGIL_TASK_INDEX &&
  echo "out \$VIGIL_TASK_INDEX" &&
  { [ "\$VIGIL_ATTEMPT" != 1 ] || sleep \${{ matrix.s }}; } &&
  echo done >> $W/done-\$VIGIL_TASK_INDEX
Y
"$VIGIL" run --jobs 4 k.yaml >/dev/null 2>&1 &
vpid=$!
i=0
while { [ ! -e "$W/done-0" ] || [ ! -e "$W/done-1" ] ||
    [ ! -e "$W/start-3" ]; } && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i+1))
done
[ -e "$W/start-3" ] || fail "slow tasks never started"
sleep 0.5
kill -9 $vpid
wait $vpid 2>/dev/null
id=$(last_run)
expect_eq "states after kill -9" "SUCCEEDED SUCCEEDED RUNNING RUNNING" \
    "$(jq_run "$id" '" ".join(t["state"] for t in d["tasks"])')"
# Only the ended tasks have results; the killed ones would run.
"$VIGIL" reuse list "$id" | tail -n 1 | grep -q "^2 results kept" ||
    fail "after kill -9: $("$VIGIL" reuse list "$id")"
"$VIGIL" run --reuse-only k.yaml >"$W/only"
grep -q "^2     run " "$W/only" && grep -q "^3     run " "$W/only" &&
    grep -q "^0     reuse " "$W/only" || fail "report: $(cat "$W/only")"
"$VIGIL" resume -q "$id" || fail "resume"
"$VIGIL" reuse list "$id" | tail -n 1 | grep -q "^4 results kept" ||
    fail "after resume: $("$VIGIL" reuse list "$id")"
"$VIGIL" run -q k.yaml || fail "run after resume"
expect_eq "nothing ran again" "1 1 2 2" \
    "$(for t in 0 1 2 3; do wc -l <"$W/start-$t"; done | tr '\n' ' ' |
    sed 's/ $//')"
pass

#!/bin/sh
# A task of a rerunnable job (gridengine.options r: y) that Grid Engine
# runs again from the start (qmod -rj, as after its host failed): vigil
# follows the task's new run in the same attempt, says so
# ("rerun by Grid Engine"), takes the result of the run that finished,
# never the killed one's, and the sibling task is untouched.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

ge_yaml "$W/r.yaml" rerun 2 \
    "'if [ \${{ matrix.i }} = 0 ] && [ ! -e $W/once ]; then : >$W/once; sleep 120; fi; echo run \${{ matrix.i }}'" \
    "isolation:
  writable: [\"$W\"]" '' 'options:
  r: y'
"$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
n=0
until [ -e "$W/once" ] && [ -f "$VIGIL_HOME/runs/$id/tasks/0/heartbeat" ]; do
	n=$((n + 1))
	[ $n -lt 120 ] || fail "task 0 never ran: $("$VIGIL" status "$id")"
	sleep 1
done
handle=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
qmod -rj "$handle" >"$W/qmod" 2>&1 || fail "qmod -rj $handle: $(cat "$W/qmod")"
wait "$vpid"
expect_eq "exit status ($(cat "$W/out"))" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "attempts" "1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
expect_eq "task 0's output" "run 0" "$("$VIGIL" logs "$id/0" | tail -n 1)"
"$VIGIL" status "$id/0" >"$W/st"
grep -q "rerun by Grid Engine" "$W/st" ||
	fail "the rerun is not said: $(cat "$W/st")"
pass

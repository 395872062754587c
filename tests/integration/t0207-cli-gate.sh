#!/bin/sh
# The policy gate in front of run and submit: a refused task is recorded
# DENIED with the gate's reason, never runs, is audited, and the run
# exits 3; allowed tasks of the same run still run.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/g.yaml" <<'Y'
version: 1
name: gate
matrix:
  what: [ok, bad]
command: |
  if [ ${{ matrix.what }} = bad ]; then rm -rf /; fi
  echo fine
Y
"$VIGIL" run -q "$W/g.yaml" </dev/null 2>"$W/err"
expect_eq "exit status" 3 $?
grep -q "^vigil: task 0 \[what=ok\] DENIED: deny: destructive" "$W/err" ||
    fail "no denial line: $(cat "$W/err")"
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
expect_eq "run state" DENIED "$(jq_run "$id" 'd["state"]')"
expect_eq "task states" "DENIED DENIED" \
    "$(jq_run "$id" '" ".join(t["state"] for t in d["tasks"])')"
expect_eq "attempts" "0 0" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
[ ! -e "$VIGIL_HOME/runs/$id/tasks/0" ] || fail "a denied task ran"
n=$(python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute(\"select count(*) from audit where run_id=? and verdict='deny' and category='destructive'\", (sys.argv[2],)).fetchone()[0])" \
    "$VIGIL_HOME/vigil.db" "$id")
expect_eq "audit rows" 2 "$n"

# Submit: always auto-deny, exit 3 when nothing may run.
"$VIGIL" submit "$W/g.yaml" >"$W/id" 2>"$W/err"
expect_eq "submit exit" 3 $?
grep -q "2 of 2 tasks denied by the policy gate (auto-deny)" "$W/err" ||
    fail "submit: $(cat "$W/err")"
# --mode must be a known mode.
"$VIGIL" run --mode sometimes "$W/g.yaml" 2>"$W/err"
expect_eq "bad mode exit" 2 $?
expect_eq "bad mode msg" "vigil: unknown policy mode 'sometimes' (use auto-deny, auto-approve or interactive)" "$(cat "$W/err")"
pass

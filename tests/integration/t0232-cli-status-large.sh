#!/bin/sh
# A run of more than 1,000 tasks: tasks built one at a time from the
# matrix (exclude and include included) run as the full expansion would;
# `vigil status RUN` lists only the tasks that did not succeed, says how
# many it left out, and `--all` / `--state STATE` list every task or
# those in one state; the counts by state kept by the store match the
# tasks; bad uses of the options are refused with what would be valid.
set -u
. "$(dirname "$0")/engine-lib.sh"

{
	echo "version: 1"
	echo "name: large"
	echo "matrix:"
	echo "  a: [$(seq -s ', ' 0 599)]"
	echo "  b: [0, 1]"
	echo "  exclude: [{a: 5, b: 0}]"
	echo "  include: [{a: 9, b: 1, tag: x}, {a: solo, tag: own}]"
	cat <<'Y'
command: |
  [ "$VIGIL_MATRIX_A$VIGIL_MATRIX_B" = 71 ] && exit 3
  [ -n "${VIGIL_MATRIX_TAG:-}" ] && echo "tag=$VIGIL_MATRIX_TAG ${{ task.index }}"
  exit 0
Y
} >"$W/large.yaml"
"$VIGIL" run -q --jobs 2 "$W/large.yaml" 2>"$W/err"
expect_eq "run exit status (one task fails)" 1 $?
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
# 1,200 combinations, one excluded, one include of its own.
expect_eq "tasks" 1200 "$(jq_run "$id" 'len(d["tasks"])')"
# Task 18 is a=9 b=1 (task 10 is a=5 b=1: a=5 b=0 is excluded).
expect_eq "include on a combination" "tag=x 18" "$("$VIGIL" logs "$id/18")"
expect_eq "matrix of task 18" "a=9 b=1 tag=x" \
    "$(jq_run "$id" '" ".join(k + "=" + v for k, v in d["tasks"][18]["matrix"].items())')"
expect_eq "include of its own, last" "tag=own 1199" \
    "$("$VIGIL" logs "$id/1199")"
expect_eq "tasks that printed" 2 "$(ls "$VIGIL_HOME/runs/$id/tasks" | wc -l)"
expect_eq "failed task" "a=7 b=1" \
    "$(jq_run "$id" '[" ".join(k + "=" + v for k, v in t["matrix"].items()) for t in d["tasks"] if t["state"] == "FAILED"][0]')"

"$VIGIL" status "$id" >"$W/st" || fail "status RUN: $(cat "$W/st")"
grep -q "^1200 tasks: 1199 SUCCEEDED, 1 FAILED" "$W/st" ||
    fail "counts: $(head -3 "$W/st")"
expect_eq "rows of a large run" 1 "$(grep -c '^ *[0-9][0-9]*  [A-Z]' "$W/st")"
grep -q "^ *14  FAILED  *3 " "$W/st" || fail "the failed row: $(cat "$W/st")"
grep -q "^1199 of 1200 tasks not listed (1199 SUCCEEDED): --all" "$W/st" ||
    fail "the note: $(tail -2 "$W/st")"
"$VIGIL" status "$id" --all >"$W/all" || fail "status --all"
expect_eq "rows with --all" 1200 "$(grep -c '^ *[0-9][0-9]*  [A-Z]' "$W/all")"
grep -q "^usage: " "$W/all" || fail "no usage line with --all"
"$VIGIL" status "$id" --state SUCCEEDED >"$W/ok" || fail "status --state"
expect_eq "rows with --state SUCCEEDED" 1199 \
    "$(grep -c '^ *[0-9][0-9]*  SUCCEEDED' "$W/ok")"
expect_eq "other rows with --state SUCCEEDED" 0 \
    "$(grep -c '^ *[0-9][0-9]*  FAILED' "$W/ok")"
"$VIGIL" status "$id" --state OOM >"$W/oom" || fail "status --state OOM"
expect_eq "rows with --state OOM" 0 "$(grep -c '^ *[0-9][0-9]*  [A-Z]' "$W/oom")"

# The counts kept by the store are the tasks' (one row per state).
expect_eq "kept counts" "FAILED 1;SUCCEEDED 1199;" "$(python3 - "$VIGIL_HOME/vigil.db" "$id" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
kept = dict(db.execute("select state, n from task_counts where run_id = ? and n > 0", (sys.argv[2],)))
real = dict(db.execute("select state, count(*) from tasks where run_id = ? group by state", (sys.argv[2],)))
print("".join("%s %d;" % kv for kv in sorted(kept.items())) if kept == real else "kept %r, tasks %r" % (kept, real))
P
)"

# Bad uses: an unknown state, --all with RUN/TASK or --json.
"$VIGIL" status "$id" --state DONE 2>"$W/e1"
expect_eq "unknown state exit" 2 $?
grep -q "unknown task state 'DONE' (one of PENDING" "$W/e1" ||
    fail "unknown state: $(cat "$W/e1")"
"$VIGIL" status "$id/3" --all 2>"$W/e2"
expect_eq "--all with RUN/TASK exit" 2 $?
grep -q -- "--all lists the tasks of one run" "$W/e2" ||
    fail "--all with RUN/TASK: $(cat "$W/e2")"
"$VIGIL" status "$id" --state FAILED --json 2>"$W/e3"
expect_eq "--state with --json exit" 2 $?
"$VIGIL" status --all 2>"$W/e4"
expect_eq "--all without RUN exit" 2 $?
pass

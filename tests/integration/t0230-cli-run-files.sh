#!/bin/sh
# Files only where there is something in them: silent tasks leave no task
# directory, empty stdout/stderr are removed, output and files a task
# writes stay; TMPDIR is one directory per slot, emptied between tasks
# and removed when vigil exits; `vigil logs` of a silent task prints
# nothing; `vigil status RUN/TASK` reads one task.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/files.yaml" <<'Y'
version: 1
name: files
matrix:
  i: [0, 1, 2, 3, 4, 5]
command: |
  case ${{ matrix.i }} in
  1) echo out ;;
  2) echo err >&2 ;;
  3) echo kept >"$VIGIL_TASK_DIR/mine" ;;
  4) echo "$TMPDIR" ;;
  esac
  [ -d "$TMPDIR" ] || { echo "no TMPDIR $TMPDIR" >&2; exit 9; }
  left=$(ls -A "$TMPDIR")
  [ -z "$left" ] || { echo "TMPDIR not empty: $left" >&2; exit 8; }
  touch "$TMPDIR/leftover"
Y
"$VIGIL" run -q --jobs 2 "$W/files.yaml" 2>"$W/err" ||
    fail "run: $(cat "$W/err")"
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
dir=$VIGIL_HOME/runs/$id
expect_eq "silent tasks' directories" "" \
    "$(ls -d "$dir"/tasks/0 "$dir"/tasks/5 2>/dev/null)"
expect_eq "task 1 files" "stdout" "$(ls "$dir/tasks/1")"
expect_eq "task 1 stdout" "out" "$(cat "$dir/tasks/1/stdout")"
expect_eq "task 2 files" "stderr" "$(ls "$dir/tasks/2")"
expect_eq "task 3 files" "mine" "$(ls "$dir/tasks/3")"
# A slot's directory, made once, emptied after each task (every task
# checks that it starts empty and leaves a file behind).
case $(cat "$dir/tasks/4/stdout") in
"$dir"/tmp/*.[01]) ;;
*) fail "TMPDIR of task 4: $(cat "$dir/tasks/4/stdout")" ;;
esac
expect_eq "slots removed at exit" "" \
    "$(find "$dir/tmp" -mindepth 1 -type d 2>/dev/null)"
expect_eq "logs of a silent task" "" "$("$VIGIL" logs "$id/0")"
expect_eq "logs of task 1" "out" "$("$VIGIL" logs "$id/1")"
expect_eq "stderr of task 2" "err" "$("$VIGIL" logs "$id/2" --stderr)"
"$VIGIL" status "$id/5" >"$W/st5" || fail "status RUN/TASK"
expect_eq "status RUN/TASK rows" 1 \
    "$(grep -c '^ *[0-9][0-9]*  SUCCEEDED' "$W/st5")"
grep -q "^ *5  SUCCEEDED" "$W/st5" || fail "status of task 5: $(cat "$W/st5")"
pass

#!/bin/sh
# vigil task-exec RUN_DIR INDEX: the contract the slurm scheduler relies
# on (docs/state.md): result.json, heartbeat, attempt number, exit codes.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/te.yaml" <<'Y'
version: 1
name: te
matrix:
  what: [ok, fail, slow]
command: |
  case ${{ matrix.what }} in
  ok) echo "attempt $VIGIL_ATTEMPT" ;;
  fail) exit 7 ;;
  slow) sleep 30 ;;
  esac
timeout: 4s
kill_grace: 1s
Y
"$VIGIL" run -q --dry-run "$W/te.yaml" >/dev/null || fail "dry run"
# Record a run, to get a run directory.
"$VIGIL" run -q "$W/te.yaml"
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
dir=$VIGIL_HOME/runs/$id
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$dir/tasks/$1/result.json" "$2"; }

VIGIL_ATTEMPT=3 "$VIGIL" task-exec "$dir" 0
expect_eq "ok exit" 0 $?
expect_eq "ok state" SUCCEEDED "$(field 0 state)"
expect_eq "ok output" "attempt 3" "$(tail -n 1 "$dir/tasks/0/stdout")"
SLURM_RESTART_COUNT=1 "$VIGIL" task-exec "$dir" 1
expect_eq "fail exit" 7 $?
expect_eq "fail state" FAILED "$(field 1 state)"
expect_eq "fail code" 7 "$(field 1 exit_code)"

# Heartbeat while it runs; SIGTERM to task-exec cancels the task.
VIGIL_HEARTBEAT=1 "$VIGIL" task-exec "$dir" 2 & tpid=$!
sleep 2.2
[ -s "$dir/tasks/2/heartbeat" ] || fail "no heartbeat"
read -r t host pid <"$dir/tasks/2/heartbeat"
expect_eq "heartbeat pid" "$tpid" "$pid"
age=$(awk -v t="$t" -v n="$(date +%s)" 'BEGIN { print int(n - t) }')
[ "$age" -le 2 ] || fail "heartbeat is ${age}s old"
kill -TERM $tpid
wait $tpid
expect_eq "cancel exit" 143 $?
expect_eq "cancel state" CANCELLED "$(field 2 state)"

# The manifest's timeout (4s) applies.
"$VIGIL" task-exec "$dir" 2
expect_eq "timeout exit" 124 $?
expect_eq "timeout state" TIMEOUT "$(field 2 state)"
expect_eq "timeout reason" "timed out after 4s" "$(field 2 reason)"

"$VIGIL" task-exec "$dir" 3 2>"$W/e"
expect_eq "bad index exit" 2 $?
expect_eq "bad index msg" "vigil: run '$dir' has no task 3 (it has 3)" "$(cat "$W/e")"
"$VIGIL" task-exec "$W/nope" 0 2>"$W/e"
expect_eq "bad dir exit" 2 $?
expect_eq "bad dir msg" "vigil: '$W/nope/manifest.json' does not exist" "$(cat "$W/e")"
pass

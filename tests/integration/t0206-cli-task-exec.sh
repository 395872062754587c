#!/bin/sh
# vigil task-exec --manifest-sha256 HEX RUN_DIR INDEX: the contract the
# slurm scheduler relies on (docs/state.md): result.json, heartbeat,
# attempt number, exit codes; a manifest that is not the one submitted
# (another digest, none given, a run directory others can write) runs
# nothing.
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
sum=$(run_digest "$dir")
te() { "$VIGIL" task-exec --manifest-sha256 "$sum" "$@"; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$dir/tasks/$1/result.json" "$2"; }

VIGIL_ATTEMPT=3 te "$dir" 0
expect_eq "ok exit" 0 $?
expect_eq "ok state" SUCCEEDED "$(field 0 state)"
expect_eq "ok output" "attempt 3" "$(tail -n 1 "$dir/tasks/0/stdout")"
SLURM_RESTART_COUNT=1 te "$dir" 1
expect_eq "fail exit" 7 $?
expect_eq "fail state" FAILED "$(field 1 state)"
expect_eq "fail code" 7 "$(field 1 exit_code)"

# Heartbeat while it runs; SIGTERM to task-exec cancels the task.
VIGIL_HEARTBEAT=1 "$VIGIL" task-exec --manifest-sha256 "$sum" "$dir" 2 &
tpid=$!
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
te "$dir" 2
expect_eq "timeout exit" 124 $?
expect_eq "timeout state" TIMEOUT "$(field 2 state)"
expect_eq "timeout reason" "timed out after 4s" "$(field 2 reason)"

te "$dir" 3 2>"$W/e"
expect_eq "bad index exit" 2 $?
expect_eq "bad index msg" "vigil: run '$dir' has no task 3 (it has 3)" "$(cat "$W/e")"
te "$W/nope" 0 2>"$W/e"
expect_eq "bad dir exit" 2 $?
expect_eq "bad dir msg" "vigil: run directory '$W/nope': No such file or directory" "$(cat "$W/e")"

# Not the manifest submitted: nothing runs.
rm -f "$W/ran"
cp "$dir/manifest.json" "$W/good.json"
sed 's/exit 7/touch '"$(echo "$W" | sed 's/[\/&]/\\&/g')"'\/ran/' "$W/good.json" >"$dir/manifest.json"
grep -q "$W/ran" "$dir/manifest.json" || fail "the changed manifest does not name the marker"
te "$dir" 1 2>"$W/e"
expect_eq "changed manifest exit" 4 $?
[ ! -e "$W/ran" ] || fail "a changed manifest ran"
grep -q "is not the manifest this job was submitted with" "$W/e" || fail "not told: $(cat "$W/e")"
"$VIGIL" task-exec "$dir" 1 2>"$W/e"
expect_eq "no digest exit" 2 $?
[ ! -e "$W/ran" ] || fail "a manifest without a digest ran"
grep -q "no --manifest-sha256" "$W/e" || fail "not told: $(cat "$W/e")"
cp "$W/good.json" "$dir/manifest.json"
# A run directory others can write: refused though the digest matches.
chmod 777 "$dir"
te "$dir" 0 2>"$W/e"
expect_eq "open run dir exit" 4 $?
grep -q "run directory '$dir' is owned by root (uid 0), mode 0777" "$W/e" ||
    fail "not told: $(cat "$W/e")"
chmod 700 "$dir"
te "$dir" 0 || fail "the good manifest no longer runs"
pass

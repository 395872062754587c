#!/bin/sh
# reuse: true: a second run of the same manifest runs nothing, records
# every task CACHED with its logs and outputs brought in by hard link,
# and exits 0; a changed input runs the tasks again; --no-reuse runs
# everything, --reuse-only runs nothing; keys and what went into them
# are shown by status; a result whose files are gone is a miss; gc keeps
# the runs results need until they are dropped; with output: stream a
# hit's output goes into the new run's stream (from the reused run's
# stream or files); bad values are refused with their place in the
# manifest.
set -u
. "$(dirname "$0")/engine-lib.sh"

mkdir "$W/wd" && cd "$W/wd" || fail "no work dir"
echo one >data.txt
cat >r.yaml <<Y
version: 1
name: rr
reuse: true
inputs: ["*.txt"]
matrix:
  x: [1, 2, 3]
isolation:
  writable: ["$W"]
outputs: ["res-*"]
command: |
  echo ran >> $W/ran-\${{ matrix.x }}
  echo "x=\${{ matrix.x }} \$(cat data.txt)"
  echo "r\${{ matrix.x }}" > "\$VIGIL_SCRATCH_DIR/res-\${{ matrix.x }}"
Y
ran() { cat "$W"/ran-* 2>/dev/null | wc -l; }
states() { jq_run "$1" '" ".join(t["state"] for t in d["tasks"])'; }

"$VIGIL" run -q r.yaml || fail "first run"
first=$(last_run)
expect_eq "first run" 3 "$(ran)"
"$VIGIL" run -q r.yaml
expect_eq "second run exit" 0 $?
second=$(last_run)
expect_eq "second run ran nothing" 3 "$(ran)"
expect_eq "second states" "CACHED CACHED CACHED" "$(states "$second")"
expect_eq "second run state" SUCCEEDED "$(jq_run "$second" 'd["state"]')"
expect_eq "log brought" "x=2 one" "$("$VIGIL" logs "$second/1")"
o="$VIGIL_HOME/runs/$second/tasks/1/outputs/res-2"
expect_eq "output brought" r2 "$(cat "$o")"
expect_eq "hard link" 2 "$(stat -c %h "$o")"
expect_eq "reused attempt" "$first/1/1" \
    "$(jq_run "$second" 'd["tasks"][1]["reuse"]["reused"]')"
"$VIGIL" status "$second/1" >"$W/st"
grep -q "^reuse key: [0-9a-f]\{32\}, reused $first/1/1" "$W/st" ||
    fail "status: $(cat "$W/st")"
grep -q '^  input: data.txt 4 [0-9a-f]\{16\}$' "$W/st" ||
    fail "status inputs: $(cat "$W/st")"
grep -q '^  command: "echo ran' "$W/st" || fail "status: $(cat "$W/st")"

# --reuse-only says, runs nothing, records nothing.
"$VIGIL" run --reuse-only r.yaml >"$W/only" || fail "reuse-only"
grep -q "^3 tasks: 3 reused, 0 would run; nothing was run" "$W/only" ||
    fail "reuse-only: $(cat "$W/only")"
expect_eq "reuse-only made no run" "$second" "$(last_run)"

# A changed input is a new key for every task.
echo two >data.txt
"$VIGIL" run --reuse-only --json r.yaml | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["reused"] == 0 and d["would_run"] == 3, d' || fail "json report"
"$VIGIL" run -q r.yaml || fail "third run"
expect_eq "changed input runs all" 6 "$(ran)"
third=$(last_run)
expect_eq "log of the new input" "x=1 two" "$("$VIGIL" logs "$third/0")"

# --no-reuse runs everything and keeps nothing for reuse (its stored
# manifest says reuse: false, for resume too).
"$VIGIL" run -q --no-reuse r.yaml || fail "no-reuse run"
expect_eq "no-reuse runs all" 9 "$(ran)"
"$VIGIL" reuse list "$(last_run)" | grep -q "^0 results kept" ||
    fail "no-reuse kept results"
"$VIGIL" run -q --no-reuse --reuse-only r.yaml 2>"$W/err"
expect_eq "no-reuse with reuse-only" 2 $?

# The newest result of task 0 loses its stdout: a miss, it runs again.
newest=$third
rm "$VIGIL_HOME/runs/$newest/tasks/0/stdout"
"$VIGIL" run -q r.yaml || fail "run after removal"
expect_eq "gone files: one runs" 10 "$(ran)"
expect_eq "states after removal" "SUCCEEDED CACHED CACHED" \
    "$(states "$(last_run)")"

# gc keeps what results need; dropped, their runs go.
"$VIGIL" gc --older-than 0 >"$W/gc" || fail "gc"
grep -q "^kept $newest: it holds results kept for reuse" "$W/gc" ||
    fail "gc: $(cat "$W/gc")"
grep -q "^removed $second" "$W/gc" || fail "gc: $(cat "$W/gc")"
"$VIGIL" reuse list | tail -n 1 | grep -q "^6 results kept for reuse" ||
    fail "list: $("$VIGIL" reuse list)"
"$VIGIL" reuse drop --all | grep -q "^6 results dropped" || fail "drop"
"$VIGIL" gc --older-than 0 | grep -q "^removed $newest" || fail "gc 2"
"$VIGIL" run -q --reuse-only r.yaml | tail -n 1 |
    grep -q "0 reused, 3 would run" || fail "after drop"

# output: stream: a hit's output goes into the new run's stream, from
# the reused run's stream, or from its files when it had none; its
# collected outputs are brought as without a stream.
"$VIGIL" run -q r.yaml || fail "run before stream"
"$VIGIL" run -q --set output=stream r.yaml || fail "stream run 1"
s1=$(last_run)
expect_eq "stream from files: states" "CACHED CACHED CACHED" "$(states "$s1")"
expect_eq "stream from files: log" "x=3 $(cat data.txt)" "$("$VIGIL" logs "$s1/2")"
[ -f "$VIGIL_HOME/runs/$s1/stream/0.index" ] || fail "no stream in $s1"
rm -f "$W"/ran-*
sed 's/^name: rr/name: rs/; s/^  echo "x=/  echo "s x=/' r.yaml >s.yaml
"$VIGIL" run -q --set output=stream s.yaml || fail "stream run 2"
expect_eq "stream: first run ran" 3 "$(ran)"
"$VIGIL" run -q --set output=stream s.yaml || fail "stream run 3"
s3=$(last_run)
expect_eq "stream from stream: ran nothing" 3 "$(ran)"
expect_eq "stream from stream: states" "CACHED CACHED CACHED" \
    "$(states "$s3")"
expect_eq "stream from stream: log" "s x=2 $(cat data.txt)" "$("$VIGIL" logs "$s3/1")"
expect_eq "stream: output brought" r2 \
    "$(cat "$VIGIL_HOME/runs/$s3/tasks/1/outputs/res-2" 2>&1)"

# Bad values, with their place.
sed 's/^reuse: true/reuse: maybe/' r.yaml >bad1.yaml
"$VIGIL" validate bad1.yaml 2>"$W/e1"
expect_eq "bad reuse exit" 2 $?
grep -q "bad1.yaml:3:8: " "$W/e1" || fail "bad reuse: $(cat "$W/e1")"
sed 's|^inputs: .*|inputs: ["/etc/*", "d/${{ matrix.x }}"]|' r.yaml >bad2.yaml
"$VIGIL" validate bad2.yaml 2>"$W/e2"
expect_eq "bad inputs exit" 2 $?
grep -q "bad2.yaml:4:10: error: 'inputs\[0\]': '/etc/\*' must be a glob relative" \
    "$W/e2" || fail "bad inputs: $(cat "$W/e2")"
grep -q "bad2.yaml:4:20: error: 'inputs\[1\]'.*no \${{ }}" "$W/e2" ||
    fail "bad inputs: $(cat "$W/e2")"
pass

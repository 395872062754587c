#!/bin/sh
# Collected outputs are easy to find and kept: vigil status RUN names how
# many and where, vigil status RUN/TASK lists each file (and what was
# left behind, and a collection's error), the report has them; a
# relative outputs.dest (a literal ../x too) is the run's working
# directory's, also when a retry starts elsewhere; vigil gc removes the
# outputs inside the run directory with it and never those outside
# $VIGIL_HOME.
set -u
. "$(dirname "$0")/engine-lib.sh"

A=$W/a
mkdir -p "$A" "$W/elsewhere"
cat >"$W/o.yaml" <<Y
version: 1
name: outs
matrix:
  n: [1, 2]
isolation:
  writable: ["$W"]
command: |
  echo "r \${{ matrix.n }}" >"\$VIGIL_TASK_DIR/r.csv"
  mkdir -p "\$VIGIL_TASK_DIR/plots"
  echo p >"\$VIGIL_TASK_DIR/plots/p.txt"
  [ -e $A/go ] || [ \${{ matrix.n }} = 1 ]
outputs:
  paths: ["*.csv", "plots"]
  dest: "res/\${{ matrix.n }}"
Y
last_id() {
	"$VIGIL" status --json last | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["id"])'
}

(cd "$A" && "$VIGIL" run -q "$W/o.yaml")
expect_eq "run exit" 1 $?
id=$(last_id)
expect_eq "dest in the working directory" "p.txt r.csv" \
    "$(ls "$A/res/2" "$A/res/2/plots" | grep -v ':$' | grep -v '^plots$' |
    grep . | sort | tr '\n' ' ' | sed 's/ $//')"
"$VIGIL" status "$id" >"$W/st"
grep -qx "outputs: 4 files, 12 bytes, from 2 tasks, in $A/res/1 and 1 more destination (vigil status RUN/TASK lists them)" \
    "$W/st" || fail "status RUN: $(cat "$W/st")"
"$VIGIL" status "$id/1" >"$W/st1"
expect_eq "status RUN/TASK" "outputs (attempt 1, FAILED) in $A/res/2:
  r.csv  4 bytes  from task
  plots/p.txt  2 bytes  from task" \
    "$(sed -n '/^outputs (/,/^$/p' "$W/st1" | sed '/^$/d')"

# A retry started elsewhere collects into the same place.
touch "$A/go"
rm -rf "$A/res/2"
(cd "$W/elsewhere" && "$VIGIL" retry -q "$id" --failed)
expect_eq "retry exit" 0 $?
[ -f "$A/res/2/r.csv" ] || fail "the retry did not collect into $A/res/2"
[ -e "$W/elsewhere/res" ] && fail "the retry collected where it started"
"$VIGIL" status "$id/1" | grep -qx "outputs (attempt 2, SUCCEEDED) in $A/res/2:" ||
    fail "status after retry: $("$VIGIL" status "$id/1")"

# The report names them.
"$VIGIL" report -o "$W/rep.html" "$id" || fail "report"
python3 - "$W/rep.html" "$A" <<'PY' || fail "report outputs"
import json, re, sys
html, a = open(sys.argv[1]).read(), sys.argv[2]
m = re.search(r'"outputs":(\{"tasks":.*?"bytes":\d+\})', html)
o = json.loads(m.group(1))
assert o["files"] == 4 and o["tasks_total"] == 2, o
assert o["tasks"][1] == {"task": 1, "dest": a + "/res/2",
                         "files": ["r.csv", "plots/p.txt"]}, o
assert '<div id="outputs">' in html
PY

# A literal ../x is the working directory's parent's x, not the run
# directory's.
cat >"$W/up.yaml" <<Y
version: 1
isolation:
  writable: ["$W"]
command: echo u >"\$VIGIL_TASK_DIR/u.txt"
outputs:
  paths: ["u.txt"]
  dest: "../up"
Y
(cd "$A" && "$VIGIL" run -q "$W/up.yaml") || fail "../x run"
uid=$(last_id)
[ -f "$W/up/u.txt" ] || fail "../up is not beside the working directory"
[ -e "$VIGIL_HOME/runs/up" ] && fail "../up went beside the run directory"

# A destination that cannot be made: the error is shown.
cat >"$W/bad.yaml" <<Y
version: 1
isolation:
  writable: ["$W"]
command: echo b >"\$VIGIL_TASK_DIR/b.txt"
outputs:
  paths: ["b.txt"]
  dest: "$W/file/sub"
Y
: >"$W/file"
"$VIGIL" run -q "$W/bad.yaml" 2>/dev/null
"$VIGIL" status last/0 >"$W/stb"
grep -q "^  error: " "$W/stb" || fail "no error shown: $(cat "$W/stb")"
grep -q "^outputs (attempt 1, SUCCEEDED) in $W/file/sub:" "$W/stb" ||
    fail "bad dest: $(cat "$W/stb")"

# Default destination (inside the run directory) and one outside.
cat >"$W/in.yaml" <<Y
version: 1
command: echo i >"\$VIGIL_TASK_DIR/i.txt"
outputs: ["i.txt"]
Y
"$VIGIL" run -q "$W/in.yaml" || fail "default dest run"
iid=$(last_id)
idir=$VIGIL_HOME/runs/$iid
[ -f "$idir/tasks/0/outputs/i.txt" ] || fail "default dest"
"$VIGIL" status "$iid" | grep -qx "outputs: 1 file, 2 bytes, from 1 task, in $idir/tasks/0/outputs (vigil status RUN/TASK lists them)" ||
    fail "status default dest: $("$VIGIL" status "$iid")"
"$VIGIL" gc --older-than 0 >/dev/null || fail "gc"
[ -e "$idir" ] && fail "gc kept the run directory"
for f in res/1/r.csv res/2/r.csv res/2/plots/p.txt; do
	[ -f "$A/$f" ] || fail "gc removed $A/$f"
done
[ -f "$W/up/u.txt" ] || fail "gc removed $W/up/u.txt"
"$VIGIL" status "$uid" 2>/dev/null && fail "gc kept the run"
pass

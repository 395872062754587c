#!/bin/sh
# outputs: under scheduler: slurm, collected on the node by task-exec as
# the direct driver does: a 2-element job array writing into its scratch
# (scratch.keep: never) and its task directory, the files in
# tasks/<i>/outputs (or a ${{ }} dest) and listed by vigil status --json;
# then when: success with mode: move and a failing element, which gets
# no collection.
set -u
. "$(dirname "$0")/slurm-lib.sh"

# status_outputs RUN I: the outputs of task I as "from:path:bytes ...",
# "none" when nothing was collected.
status_outputs() {
	"$VIGIL" status "$1" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["tasks"][int(sys.argv[1])]
o = t["outputs"]
if o is None:
    print("none")
else:
    print(o["state"], o["attempt"], " ".join("%s:%s:%d" % (f["from"],
        f["path"], f["bytes"]) for f in o["files"]), o["error"])' "$2"
}
# files DIR: the regular files below DIR, relative, sorted, on one line.
files() { (cd "$1" 2>/dev/null && find . -type f | sort | tr '\n' ' '); }
# head_yaml NAME: the start of a 2-element array manifest named NAME.
head_yaml() {
	printf 'version: 1\nname: %s\nscheduler: slurm\nmatrix:\n  i: [0, 1]\n' \
	    "$1"
	printf 'slurm:\n  poll_min: 1s\n  poll_max: 2s\n'
}

mkdir -p "$W/scratch"
head_yaml slurm-outputs >"$W/o.yaml"
cat >>"$W/o.yaml" <<Y
scratch:
  path: $W/scratch
  keep: never
command: |
  cd "\$VIGIL_SCRATCH_DIR"
  echo "r\${{ matrix.i }}" >r.csv
  mkdir -p plots && echo "p\${{ matrix.i }}" >plots/p.txt
  echo junk >junk.bin
  echo t >"\$VIGIL_TASK_DIR/t.csv"
outputs: ["*.csv", "plots"]
Y
"$VIGIL" run -q "$W/o.yaml" >"$W/out" 2>&1
expect_eq "run exit status ($(cat "$W/out"))" 0 $?
id=$(last_run)
D=$VIGIL_HOME/runs/$id
expect_eq "states" "SUCCEEDED SUCCEEDED" "$(states "$id")"
for i in 0 1; do
	expect_eq "task $i: files in tasks/$i/outputs" \
	    "./plots/p.txt ./r.csv ./t.csv " "$(files "$D/tasks/$i/outputs")"
	expect_eq "task $i: content from the node's scratch" "r$i" \
	    "$(cat "$D/tasks/$i/outputs/r.csv")"
	expect_eq "task $i: listed by status --json" \
	    "SUCCEEDED 1 scratch:r.csv:3 scratch:plots/p.txt:3 task:t.csv:2 None" \
	    "$(status_outputs "$id" $i)"
done
expect_eq "scratch removed after the collection (keep: never)" "" \
    "$(find "$W/scratch" -name r.csv)"

# when: success, mode: move, a dest with ${{ }}: the failing element
# collects nothing and its files stay where they were.
head_yaml slurm-outputs-success >"$W/s.yaml"
cat >>"$W/s.yaml" <<Y
command: |
  echo "v\${{ matrix.i }}" >"\$VIGIL_TASK_DIR/v.txt"
  [ \${{ matrix.i }} -ne 1 ] || exit 5
outputs:
  paths: ["*.txt"]
  dest: "res/\${{ matrix.i }}"
  when: success
  mode: move
Y
# A relative dest is the run's working directory's.
(cd "$W" && "$VIGIL" run -q "$W/s.yaml") >"$W/out" 2>&1
expect_eq "when: success run exit status" 1 $?
id=$(last_run)
D=$VIGIL_HOME/runs/$id
expect_eq "when: success states" "SUCCEEDED FAILED" "$(states "$id")"
expect_eq "when: success: element 0 moved into its dest" "./v.txt " \
    "$(files "$W/res/0")"
[ -e "$D/tasks/0/v.txt" ] && fail "mode: move left tasks/0/v.txt behind"
expect_eq "when: success: element 0 listed" "SUCCEEDED 1 task:v.txt:3 None" \
    "$(status_outputs "$id" 0)"
expect_eq "when: success: failed element 1 collected nothing" "none" \
    "$(status_outputs "$id" 1)"
[ -e "$W/res/1" ] && fail "when: success made a dest for a failed element"
expect_eq "when: success: failed element's file left in place" "v1" \
    "$(cat "$D/tasks/1/v.txt")"
pass

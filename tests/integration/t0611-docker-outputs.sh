#!/bin/sh
# outputs: collected after each attempt.  In a docker container (the task
# and scratch directories are bound at their host paths): the mapping
# form with a ${{ }} dest, files from scratch and from the task dir with
# their relative paths, links refused (inside the tree or out of it:
# vigil never collects through one), vigil status --json listing them.  With the local backend:
# the list form into tasks/<i>/outputs, when: success after a failure,
# max_files, mode: move, and the manifest errors.
. "$(dirname "$0")/docker-lib.sh"
export VIGIL_HOME

status_outputs() {
	"$VIGIL" status --json last | python3 -c '
import json, sys
t = json.load(sys.stdin)["tasks"][int(sys.argv[1])]
o = t["outputs"]
if o is None:
    print("none")
else:
    print(" ".join("%s:%s:%d" % (f["from"], f["path"], f["bytes"])
        for f in o["files"]))
    for s in o["skipped"]:
        print("skipped %s: %s" % (s["path"], s["why"]))' "${1:-0}"
}
run_dir() {
	"$VIGIL" status --json last | python3 -c '
import json, sys; print(json.load(sys.stdin)["dir"])'
}

cat >"$tmp/d.yaml" <<'Y'
version: 1
name: docker-outputs
backend: docker
image: localhost/vigil-test:latest
matrix:
  n: [a, b]
command: |
  cd "$VIGIL_SCRATCH_DIR"
  echo "${{ matrix.n }}" >r.csv
  mkdir -p plots && echo p >plots/p.txt
  ln -s plots/p.txt inside.csv
  ln -s /etc/hostname escape.csv
  echo junk >junk.bin
  mkdir -p "$VIGIL_TASK_DIR/sub" && echo t >"$VIGIL_TASK_DIR/sub/t.csv"
outputs:
  paths: ["*.csv", "plots", "sub/*.csv"]
  dest: "results/${{ matrix.n }}"
Y
# A relative dest is the run's working directory's.
(cd "$tmp" && "$VIGIL" run -q "$tmp/d.yaml") >"$tmp/d.out" 2>&1
check "docker run" "$?" 0
D=$(run_dir)
check "docker: files collected" "$(cd "$tmp/results/b" && find . -type f |
    sort | tr '\n' ' ')" "./plots/p.txt ./r.csv ./sub/t.csv "
check "docker: content from the task's scratch" "$(cat "$tmp/results/b/r.csv")" b
check "docker: a link inside the tree not collected" \
    "$(ls "$tmp/results/a/inside.csv" 2>/dev/null)" ""
check "docker: listed by status" "$(status_outputs 1)" \
"scratch:r.csv:2 scratch:plots/p.txt:2 task:sub/t.csv:2
skipped escape.csv: a symbolic link (vigil never collects through one)
skipped inside.csv: a symbolic link (vigil never collects through one)"
check "docker: no container left" "$(vigil_containers)" ""

# Local backend: the list form, into tasks/<i>/outputs.
mkdir -p "$tmp/w"
cat >"$tmp/l.yaml" <<Y
version: 1
name: local-outputs
command: |
  for i in 1 2 3 4 5; do echo \$i >"\$VIGIL_TASK_DIR/f\$i.txt"; done
  echo x >"\$VIGIL_TASK_DIR/keep.log"
outputs: ["*.txt"]
Y
"$VIGIL" run -q "$tmp/l.yaml" >/dev/null 2>&1
check "list form run" "$?" 0
check "list form: into tasks/0/outputs" \
    "$(ls "$(run_dir)/tasks/0/outputs" | tr '\n' ' ')" \
    "f1.txt f2.txt f3.txt f4.txt f5.txt "
check "list form: stdout is not an output" \
    "$(ls "$(run_dir)/tasks/0/outputs" | grep -c stdout)" 0

# vigil's own names in the task directory are never outputs, the files
# of a job step (srun launcher) among them: a glob of everything there
# takes only the task's file.
cat >"$tmp/o.yaml" <<Y
version: 1
name: local-outputs-own
command: |
  for f in mine.txt step step.1 step.log step.x; do
    echo x >"\$VIGIL_TASK_DIR/\$f"
  done
outputs: ["*"]
Y
"$VIGIL" run -q "$tmp/o.yaml" >/dev/null 2>&1
check "own names run" "$?" 0
check "own names: only the task's files collected" \
    "$(ls "$(run_dir)/tasks/0/outputs" | tr '\n' ' ')" "mine.txt step.x "

cat >"$tmp/m.yaml" <<Y
version: 1
name: local-outputs-limits
command: |
  for i in 1 2 3 4 5; do echo \$i >"\$VIGIL_TASK_DIR/f\$i.txt"; done
outputs:
  paths: ["f*.txt"]
  max_files: 2
  mode: move
Y
"$VIGIL" run -q "$tmp/m.yaml" >/dev/null 2>&1
T=$(run_dir)/tasks/0
check "max_files: two collected" "$(ls "$T/outputs" | wc -l)" 2
check "mode move: collected ones left the task dir" \
    "$(ls "$T" | grep -c '^f[0-9].txt$')" 3
check "max_files: the rest listed as skipped" "$(status_outputs |
    grep -c 'over outputs.max_files')" 3

cat >"$tmp/f.yaml" <<Y
version: 1
name: local-outputs-when
command: echo x >"\$VIGIL_TASK_DIR/o.txt"; exit 3
outputs:
  paths: ["o.txt"]
  when: success
Y
"$VIGIL" run -q "$tmp/f.yaml" >/dev/null 2>&1
check "when success: failed run" "$?" 1
check "when success: nothing collected after a failure" "$(status_outputs)" \
    none

# Manifest errors name the field and what is valid.
bad() {
	printf 'version: 1\ncommand: "true"\n%s\n' "$2" >"$tmp/bad.yaml"
	got=$("$VIGIL" validate "$tmp/bad.yaml" 2>&1)
	case $got in
	*"$3"*) echo "ok: $1" ;;
	*) echo "FAIL: $1: $got"; fail=1 ;;
	esac
}
bad "scalar" "outputs: 3" \
    "bad.yaml:3:10: error: 'outputs' must be a list of strings, not '3'"
bad "absolute glob" 'outputs: ["/etc/*"]' \
    "'outputs[0]': '/etc/*' must be a glob relative to"
bad "glob with .." 'outputs: {paths: ["a/../../x"]}' \
    "'outputs.paths[0]': 'a/../../x' leaves the task's directories"
bad "bad dest template" 'outputs: {paths: [x], dest: "r/${{ matrix.n"}' \
    "'outputs.dest':"
bad "bad when" 'outputs: {paths: [x], when: sometimes}' \
    "must be one of always, success, failure"
bad "bad mode" 'outputs: {paths: [x], mode: link}' \
    "must be one of copy, move"
bad "unknown key" 'outputs: {paths: [x], dst: y}' "dst"
exit $fail

#!/bin/sh
# t0215-cli-mixed-resources: one sweep whose tasks each ask their own
# resources (${{ matrix.NAME }} in resources), checked from the tasks'
# own timestamps: tasks of 1, 2 and 4 CPUs on a pool of 4 never hold more
# than 4 CPUs at once and small tasks run beside each other; tasks of 1
# and 2 GPUs each get as many distinct ids as they asked, never shared;
# the attempt records its task's GPUs; a task value its field refuses is
# an error at FILE:LINE:COL of the template, and a task that could never
# fit is refused naming that task; `vigil doctor --set pool.gpus=...`
# restricts the pool it prints.
set -u
. "$(dirname "$0")/engine-lib.sh"
last_dir() {
	id=$("$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
	"$VIGIL" status "$id" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["dir"])'
}
cat >"$W/m.yaml" <<'Y'
version: 1
name: mixed
matrix:
  cpus: [4, 1, 2]
  rep: [a, b, c]
  include:
    - {cpus: 1, gpus: 1}
    - {cpus: 2, gpus: 2}
    - {cpus: 4, gpus: 1}
isolation:
  level: none
resources:
  cpus: ${{ matrix.cpus }}
  gpus: ${{ matrix.gpus }}
command: |
  s=$(date +%s.%N); sleep 0.5; e=$(date +%s.%N)
  echo "$s $e ${{ matrix.cpus }} ${{ matrix.gpus }} $CUDA_VISIBLE_DEVICES"
Y
# Each include adds gpus to the three tasks of its cpus value.
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=4 "$W/m.yaml" \
    >"$W/out" 2>&1 || fail "run: $(cat "$W/out")"
dir=$(last_dir)
cat "$dir"/tasks/*/stdout | python3 -c '
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
assert len(rows) == 9, rows
ev = sorted([(float(r[0]), 1, r) for r in rows] +
            [(float(r[1]), -1, r) for r in rows], key=lambda x: (x[0], x[1]))
cpus = gpus = peak = small = 0
held = set()
for t, d, r in ev:
    c, g = int(r[2]), int(r[3])
    ids = r[4].split(",") if len(r) > 4 else []
    assert len(ids) == g, "task asked %d GPUs, got %s" % (g, ids)
    if d > 0:
        assert not held & set(ids), "GPU shared: %s" % ids
        held |= set(ids)
        cpus += c
        if c == 1:
            small += 1
    else:
        held -= set(ids)
        cpus -= c
        if c == 1:
            small -= 1
    assert cpus <= 4, "%d CPUs held at once" % cpus
    peak = max(peak, small)
# The three 1-CPU tasks fit beside each other.
assert peak == 3, "1-CPU tasks never ran side by side (%d)" % peak
' || fail "packing"
# The attempt records the task's own GPUs.
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" status "$id" --json >"$W/st" || fail "status"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = {t["index"]: len([g for g in (t.get("gpus") or "").split(",") if g])
     for t in d["tasks"]}
assert n[0] == 1 and n[3] == 1 and n[6] == 2, n
' "$W/st" || fail "gpus per task: $(cat "$W/st")"

# A value the field refuses, at the template's place, naming the task.
cat >"$W/bad.yaml" <<'Y'
version: 1
command: 'true'
matrix:
  mem: [1G, lots]
resources:
  memory: ${{ matrix.mem }}
Y
"$VIGIL" validate "$W/bad.yaml" >"$W/out" 2>&1
expect_eq "bad value exit" 2 $?
grep -q "bad.yaml:6:11: error: 'resources.memory' must be a size such as .*, not 'lots' (in task 1: mem=lots)" \
    "$W/out" || fail "bad value: $(cat "$W/out")"

# The one task that can never fit is named, and nothing is recorded.
before=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=2 "$W/m.yaml" \
    >"$W/out" 2>&1
expect_eq "never fits exit" 6 $?
grep -q "resources: task 0 (and 2 other tasks) asks cpus: 4, the pool has 2 (from pool.cpus)" \
    "$W/out" || fail "never fits: $(cat "$W/out")"
after=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
expect_eq "no run recorded" "$before" "$after"

# doctor takes --set for the pool, like run.
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" doctor --set 'pool.gpus=[1, 3]' \
    --set pool.cpus=6 >"$W/doc" 2>&1 || fail "doctor: $(cat "$W/doc")"
grep -q "^pool gpus: 2 nvidia (from CUDA_VISIBLE_DEVICES=0,1,2,3)" "$W/doc" ||
    fail "doctor pool gpus: $(cat "$W/doc")"
grep -q "^pool cpus: 6 (from pool.cpus)" "$W/doc" ||
    fail "doctor pool cpus: $(cat "$W/doc")"
grep -q "^gpu 3: " "$W/doc" && ! grep -q "^gpu 0: " "$W/doc" ||
    fail "doctor gpus: $(cat "$W/doc")"
"$VIGIL" doctor --set pool.cpus=many >"$W/doc" 2>&1
expect_eq "doctor bad set exit" 2 $?
grep -q "'pool.cpus' must be a whole number, not 'many'" "$W/doc" ||
    fail "doctor bad set: $(cat "$W/doc")"
pass

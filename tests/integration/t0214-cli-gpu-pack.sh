#!/bin/sh
# t0214-cli-gpu-pack: the direct scheduler packs tasks by GPUs and CPUs
# and never shares a GPU, checked from the tasks' own timestamps: eight
# one-GPU tasks on a pool of four (CUDA_VISIBLE_DEVICES) run four at a
# time, each with CUDA_VISIBLE_DEVICES and VIGIL_GPUS naming one GPU no
# other running task holds; a task without gpus gets it empty; the pool
# from a fake nvidia-smi on PATH printing the documented CSV; pool.gpus
# restricts; a task that could never fit is refused at once (exit 6,
# naming the task, what it asks and what exists).
set -u
. "$(dirname "$0")/engine-lib.sh"
cat >"$W/m.yaml" <<'Y'
version: 1
name: pack
matrix:
  i: [0, 1, 2, 3, 4, 5, 6, 7]
resources:
  gpus: 1
isolation:
  level: none
command: |
  s=$(date +%s.%N); sleep 0.6; e=$(date +%s.%N)
  echo "$s $e ${CUDA_VISIBLE_DEVICES-unset} ${VIGIL_GPUS-unset}"
Y
last_dir() {
	id=$("$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
	"$VIGIL" status "$id" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["dir"])'
}
# Checks the tasks' lines: at most $1 at once, no GPU held by two at once,
# CUDA_VISIBLE_DEVICES equal to VIGIL_GPUS; prints the peak concurrency.
check_lines() {
	cat "$(last_dir)"/tasks/*/stdout | python3 -c '
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
cap = int(sys.argv[1])
ev = sorted([(float(s), 1, g) for s, e, g, v in rows] +
            [(float(e), -1, g) for s, e, g, v in rows], key=lambda x: (x[0], x[1]))
held, peak = set(), 0
for t, d, g in ev:
    if d > 0:
        assert g not in held, "GPU %s given to two running tasks" % g
        held.add(g)
    else:
        held.discard(g)
    peak = max(peak, len(held))
for s, e, g, v in rows:
    assert g == v, "CUDA_VISIBLE_DEVICES %s but VIGIL_GPUS %s" % (g, v)
assert peak <= cap, "peak %d over %d" % (peak, cap)
print(peak)' "$1"
}

# Pool of 4 from CUDA_VISIBLE_DEVICES; enough CPUs declared.
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=8 "$W/m.yaml" \
    >"$W/out" 2>&1 || fail "run: $(cat "$W/out")"
peak=$(check_lines 4) || fail "packing: $peak"
expect_eq "peak with 4 GPUs" 4 "$peak"
cat "$(last_dir)"/tasks/*/stdout | awk '{print $3}' | sort -u >"$W/ids"
expect_eq "GPU ids used" "0 1 2 3" "$(tr '\n' ' ' <"$W/ids" | sed 's/ $//')"

# CPUs pack too: two CPUs each on a pool of 4 CPUs: two at a time.
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=4 \
    --set resources.cpus=2 "$W/m.yaml" >"$W/out" 2>&1 ||
    fail "cpus run: $(cat "$W/out")"
peak=$(check_lines 2) || fail "cpu packing: $peak"
expect_eq "peak with 2-CPU tasks on 4 CPUs" 2 "$peak"

# --jobs caps the count.
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=8 --jobs 3 \
    "$W/m.yaml" >"$W/out" 2>&1 || fail "jobs run: $(cat "$W/out")"
peak=$(check_lines 3) || fail "jobs cap: $peak"

# A task without gpus sees none: CUDA_VISIBLE_DEVICES and VIGIL_GPUS set
# and empty (an unset one would print "unset").
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set resources.gpus=0 \
    "$W/m.yaml" >"$W/out" 2>&1 || fail "no-gpu run: $(cat "$W/out")"
expect_eq "no-gpu task fields" 2 \
    "$(awk '{print NF}' "$(last_dir)/tasks/0/stdout")"

# The pool from a fake nvidia-smi printing the documented CSV.
mkdir "$W/bin"
cat >"$W/bin/nvidia-smi" <<'S'
#!/bin/sh
[ "$1" = "--query-gpu=index,uuid,name,memory.total" ] &&
    [ "$2" = "--format=csv,noheader" ] || exit 9
echo "0, GPU-6f2c0000-0000-0000-0000-000000000000, NVIDIA H200, 143771 MiB"
echo "1, GPU-6f2c0000-0000-0000-0000-000000000001, NVIDIA H200, 143771 MiB"
S
chmod +x "$W/bin/nvidia-smi"
env -u CUDA_VISIBLE_DEVICES PATH="$W/bin:$PATH" "$VIGIL" doctor >"$W/doc" 2>&1
grep -q "^pool gpus: 2 nvidia (from nvidia-smi)" "$W/doc" ||
    fail "doctor smi: $(cat "$W/doc")"
grep -q "^gpu 1: NVIDIA H200 GPU-6f2c0000-0000-0000-0000-000000000001 143771 MiB; sandbox grants /dev/nvidia1" \
    "$W/doc" || fail "doctor smi gpu 1: $(cat "$W/doc")"
env -u CUDA_VISIBLE_DEVICES PATH="$W/bin:$PATH" "$VIGIL" run \
    --set pool.cpus=8 "$W/m.yaml" >"$W/out" 2>&1 || fail "smi run: $(cat "$W/out")"
peak=$(check_lines 2) || fail "smi packing: $peak"
expect_eq "peak with 2 GPUs from nvidia-smi" 2 "$peak"

# pool.gpus restricts CUDA_VISIBLE_DEVICES; an id outside it is refused.
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=8 \
    --set 'pool.gpus=[1, 3]' "$W/m.yaml" >"$W/out" 2>&1 ||
    fail "restricted run: $(cat "$W/out")"
expect_eq "restricted ids" "1 3" "$(cat "$(last_dir)"/tasks/*/stdout |
    awk '{print $3}' | sort -u | tr '\n' ' ' | sed 's/ $//')"
CUDA_VISIBLE_DEVICES=0,1 "$VIGIL" run --set 'pool.gpus=[5]' "$W/m.yaml" \
    >"$W/out" 2>&1
expect_eq "pool.gpus outside exit" 2 $?
grep -q "pool.gpus: '5' is not among the GPUs of CUDA_VISIBLE_DEVICES=0,1" \
    "$W/out" || fail "pool.gpus outside: $(cat "$W/out")"

# A task that can never fit: this host cannot run it, refused before
# anything runs, exit 6.
before=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
CUDA_VISIBLE_DEVICES=0,1 "$VIGIL" run --set resources.gpus=3 "$W/m.yaml" \
    >"$W/out" 2>&1
expect_eq "never fits exit" 6 $?
grep -q "task 0 (and every other task) asks gpus: 3, the pool has 2 (from CUDA_VISIBLE_DEVICES=0,1)" \
    "$W/out" || fail "never fits: $(cat "$W/out")"
"$VIGIL" run --set resources.cpus=4096 --set resources.gpus=0 "$W/m.yaml" \
    >"$W/out" 2>&1
expect_eq "too many cpus exit" 6 $?
grep -q "asks cpus: 4096, the pool has [0-9]* (from CPU affinity)" "$W/out" ||
    fail "too many cpus: $(cat "$W/out")"
after=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
expect_eq "no run recorded for refused manifests" "$before" "$after"
pass

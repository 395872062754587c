#!/bin/sh
# bench/gpu-packing.sh BUILD_DIR - how tightly the direct scheduler packs
# one-GPU tasks: 200 tasks of 0.2 s on a pool of 4 GPUs (from
# CUDA_VISIBLE_DEVICES, isolation none so no device nodes are needed;
# pool.cpus 8 so CPUs do not limit) must finish within 1.15x the ideal
# makespan, 200 x 0.2 / 4 = 10 s, measured from the first task's start to
# the last one's end (the tasks' own timestamps).  Prints the ratio and
# the GPU utilisation.
#
# Then mixed CPUs: 100 tasks asking 1, 2 or 4 CPUs each (resources.cpus
# from the task's matrix values, sizes in a fixed pseudo-random order)
# of 0.5 s on a pool of POOL_CPUS CPUs (default: this host's CPUs, at
# least 8 declared as pool.cpus: the tasks sleep, so the packing is
# measured, not the machine) must keep the CPUs at least 85% busy:
# sum(cpus x (end - start)) / (pool x makespan), from the tasks' own
# timestamps.  Exits 1 when either misses its target.
set -u
B=${1:-build/release}
VIGIL=$(cd "$B" && pwd)/vigil
W=$(mktemp -d /tmp/vigil-bench-gpu-XXXXXX)
trap 'rm -rf "$W"' EXIT
export VIGIL_HOME=$W/home
cat >"$W/m.yaml" <<'Y'
version: 1
name: gpu-packing
matrix:
  i: {range: [0, 200]}
resources:
  gpus: 1
isolation:
  level: none
command: ["sh", "-c", "s=$(date +%s.%N); sleep 0.2; echo $s $(date +%s.%N) $CUDA_VISIBLE_DEVICES"]
Y
if ! "$VIGIL" validate "$W/m.yaml" >/dev/null 2>&1; then
	# No range syntax: list the values.
	python3 - "$W/m.yaml" <<'P'
import sys
p = sys.argv[1]
s = open(p).read().replace("{range: [0, 200]}", "[" + ", ".join(str(i) for i in range(200)) + "]")
open(p, "w").write(s)
P
fi
CUDA_VISIBLE_DEVICES=0,1,2,3 "$VIGIL" run --set pool.cpus=8 "$W/m.yaml" \
    >"$W/out" 2>&1 || { cat "$W/out"; exit 1; }
gpu=0
cat "$W"/home/runs/*/tasks/*/stdout | python3 -c '
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
assert len(rows) == 200, len(rows)
start = min(float(r[0]) for r in rows); end = max(float(r[1]) for r in rows)
busy = sum(float(r[1]) - float(r[0]) for r in rows)
span = end - start
ideal = 200 * 0.2 / 4
ratio = span / ideal
print("gpu-packing: 200 one-GPU tasks of 0.2 s on 4 GPUs: makespan %.2f s, "
      "ideal %.1f s, ratio %.3f (target <= 1.15), GPU utilisation %.1f%%"
      % (span, ideal, ratio, 100 * busy / (4 * span)))
sys.exit(0 if ratio <= 1.15 else 1)' || gpu=1

# Mixed CPUs.
host=$(nproc)
pool=${POOL_CPUS:-$((host > 8 ? host : 8))}
python3 - "$W/mixed.yaml" <<'P'
import random, sys
r = random.Random(11)
sizes = [r.choice([1, 2, 4]) for _ in range(100)]
inc = "".join("    - {i: %d, cpus: %d}\n" % (i, c) for i, c in enumerate(sizes))
open(sys.argv[1], "w").write(
    "version: 1\nname: cpu-packing\nmatrix:\n  i: [%s]\n  include:\n%s"
    "resources:\n  cpus: ${{ matrix.cpus }}\nisolation:\n  level: none\n"
    "command: [\"sh\", \"-c\", \"s=$(date +%%s.%%N); sleep 0.5; "
    "echo $s $(date +%%s.%%N) ${{ matrix.cpus }}\"]\n"
    % (", ".join(str(i) for i in range(100)), inc))
P
rm -rf "$W/home"
"$VIGIL" run --set pool.cpus="$pool" "$W/mixed.yaml" >"$W/out" 2>&1 ||
    { cat "$W/out"; exit 1; }
cat "$W"/home/runs/*/tasks/*/stdout | python3 -c '
import sys
pool = int(sys.argv[1])
rows = [l.split() for l in sys.stdin if l.strip()]
assert len(rows) == 100, len(rows)
start = min(float(r[0]) for r in rows); end = max(float(r[1]) for r in rows)
busy = sum(int(r[2]) * (float(r[1]) - float(r[0])) for r in rows)
span = end - start
util = busy / (pool * span)
print("cpu-packing: 100 tasks of 1, 2 or 4 CPUs (%d CPU-s) of 0.5 s on %d "
      "CPUs: makespan %.2f s, ideal %.2f s, CPU utilisation %.1f%% "
      "(target >= 85%%)" % (sum(int(r[2]) for r in rows) * 0.5, pool, span,
      busy / pool, 100 * util))
sys.exit(0 if util >= 0.85 else 1)' "$pool" || exit 1
exit $gpu

#!/bin/sh
# bench/gpu.sh BUILD_DIR - a CUDA device query through each backend that
# can run here (local, and docker/apptainer when their engines answer):
# python3 with ctypes on libcuda calls cuInit, cuDeviceGetCount and one
# cuMemAlloc in a one-GPU task, and the task prints what it saw.  On a
# machine without an NVIDIA GPU it says so and skips.
set -u
B=${1:-build/release}
VIGIL=$(cd "$B" && pwd)/vigil
if ! command -v nvidia-smi >/dev/null 2>&1 ||
    ! nvidia-smi -L >/dev/null 2>&1; then
	echo "skipped: no NVIDIA GPU on this machine (nvidia-smi absent or" \
	    "finds none)"
	exit 0
fi
W=$(mktemp -d /tmp/vigil-bench-cuda-XXXXXX)
trap 'rm -rf "$W"' EXIT
export VIGIL_HOME=$W/home
cat >"$W/q.py" <<'P'
import ctypes, os
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0, "cuInit"
n = ctypes.c_int()
assert cu.cuDeviceGetCount(ctypes.byref(n)) == 0, "cuDeviceGetCount"
dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0, "cuDeviceGet"
assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0, "cuCtxCreate"
assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 1 << 20) == 0, "cuMemAlloc"
print("devices %d CUDA_VISIBLE_DEVICES=%s VIGIL_GPUS=%s" % (n.value,
      os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("VIGIL_GPUS")))
P
run() {
	be=$1; shift
	cat >"$W/m.yaml" <<Y
version: 1
name: cuda-query
resources:
  gpus: 1
command: ["python3", "$W/q.py"]
Y
	if "$VIGIL" run --set backend="$be" "$@" "$W/m.yaml" >"$W/out" 2>&1; then
		echo "$be: $(cat "$W"/home/runs/*/tasks/0/stdout | tail -1)"
	else
		echo "$be: FAILED: $(tail -3 "$W/out")"
	fi
	rm -rf "$W/home"
}
for level in standard strict; do
	run local --set isolation.level=$level
done
"$VIGIL" doctor --backend docker | grep -q '^docker: ok' &&
    echo "docker: run the query in an image with python3 and the" \
	"NVIDIA container toolkit: vigil run --set backend=docker --set" \
	"image=IMAGE"
"$VIGIL" doctor --backend apptainer | grep -q 'ok' &&
    run singularity --set image=docker://python:3-slim
exit 0

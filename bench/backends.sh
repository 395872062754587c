#!/bin/sh
# backends.sh [BUILD_DIR] - per-task overhead of vigil's execution backends
# over the raw operation, measured in the same run, interleaved so that
# load from elsewhere hits both sides alike.
#
# docker: raw = create + start + wait + remove through the Engine API with
# curl --unix-socket (4 curl calls); vigil = one attempt of the same task
# through vg_backend_docker's run() in a fresh process (connect and
# negotiate, host-access check, image check, create, start, logs into
# files, wait, remove), as each monitor process does.  Target: vigil adds
# at most 10%.  N tasks each (BENCH_N, default 20), against a private
# podman service started by tests/harness/podman-up.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-$top/build/release}
n=${BENCH_N:-20}
DA=$build/tests/docker-attempt
[ -x "$DA" ] || { echo "backends.sh: missing $DA (make tests)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/vigil-bench.XXXXXX)
trap '"$top/tests/harness/podman-down" "$tmp/pm"; rm -rf "$tmp"' EXIT
"$top/tests/harness/podman-up" "$tmp/pm" >/dev/null
sock=$tmp/pm/podman.sock
DOCKER_HOST=unix://$sock
export DOCKER_HOST
mkdir -p "$tmp/task"

now_ns() { date +%s%N; }

raw_task() {
	id=$(curl -sf --unix-socket "$sock" -X POST \
		-H 'Content-Type: application/json' \
		-d '{"Image":"localhost/vigil-test:latest","Entrypoint":["/bin/sh"],"Cmd":["-c","true"],"HostConfig":{"NetworkMode":"none"}}' \
		http://d/v1.41/containers/create |
		sed 's/.*"Id":"\([0-9a-f]*\)".*/\1/')
	curl -sf --unix-socket "$sock" -X POST \
		"http://d/v1.41/containers/$id/start" >/dev/null
	curl -sf --unix-socket "$sock" -X POST \
		"http://d/v1.41/containers/$id/wait" >/dev/null
	curl -sf --unix-socket "$sock" -X DELETE \
		"http://d/v1.41/containers/$id?force=1" >/dev/null
}

vigil_task() {
	"$DA" --task-dir "$tmp/task" --run-id bench --index "$1" run -c true \
		>/dev/null
}

# Warm up both paths once (image layers, podman caches).
raw_task
vigil_task 0

raw=0 vig=0 i=1
while [ $i -le "$n" ]; do
	t0=$(now_ns); raw_task; t1=$(now_ns)
	vigil_task "$i"; t2=$(now_ns)
	raw=$((raw + t1 - t0))
	vig=$((vig + t2 - t1))
	i=$((i + 1))
done
python3 - "$n" "$raw" "$vig" <<'EOF'
import sys
n, raw, vig = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r, v = raw / n / 1e6, vig / n / 1e6
print(f"docker: {n} tasks each, interleaved")
print(f"docker: raw API with curl  {r:8.1f} ms/task")
print(f"docker: vigil backend      {v:8.1f} ms/task")
print(f"docker: ratio vigil/raw    {v / r:8.3f}  (overhead {100 * (v / r - 1):+.1f}%, target <= +10%)")
EOF

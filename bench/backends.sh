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

# The same API calls vigil makes after its checks (logs then wait), to
# separate vigil's own cost from the order of calls.
raw_logs_task() {
	id=$(curl -sf --unix-socket "$sock" -X POST \
		-H 'Content-Type: application/json' \
		-d '{"Image":"localhost/vigil-test:latest","Entrypoint":["/bin/sh"],"Cmd":["-c","true"],"HostConfig":{"NetworkMode":"none"}}' \
		http://d/v1.41/containers/create |
		sed 's/.*"Id":"\([0-9a-f]*\)".*/\1/')
	curl -sf --unix-socket "$sock" -X POST \
		"http://d/v1.41/containers/$id/start" >/dev/null
	curl -sf --unix-socket "$sock" \
		"http://d/v1.41/containers/$id/logs?follow=1&stdout=1&stderr=1" \
		>/dev/null
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
raw_logs_task
vigil_task 0

raw=0 raw2=0 vig=0 i=1
while [ $i -le "$n" ]; do
	t0=$(now_ns); raw_task; t1=$(now_ns)
	vigil_task "$i"; t2=$(now_ns)
	raw_logs_task; t3=$(now_ns)
	raw=$((raw + t1 - t0))
	vig=$((vig + t2 - t1))
	raw2=$((raw2 + t3 - t2))
	i=$((i + 1))
done
python3 - "$n" "$raw" "$vig" "$raw2" <<'EOF'
import sys
n, raw, vig, raw2 = (int(a) for a in sys.argv[1:5])
r, v, r2 = raw / n / 1e6, vig / n / 1e6, raw2 / n / 1e6
print(f"docker: {n} tasks each, interleaved")
print(f"docker: raw create+start+wait+remove (curl)       {r:8.1f} ms/task")
print(f"docker: raw create+start+logs+wait+remove (curl)  {r2:8.1f} ms/task")
print(f"docker: vigil backend (fresh process per task)    {v:8.1f} ms/task")
print(f"docker: ratio vigil/raw          {v / r:6.3f}  (overhead {100 * (v / r - 1):+.1f}%, target <= +10%)")
print(f"docker: ratio vigil/raw+logs     {v / r2:6.3f}  (overhead {100 * (v / r2 - 1):+.1f}%)")
EOF

#!/bin/sh
# backends.sh [BUILD_DIR] - per-task overhead of vigil's execution backends
# over the raw operation, measured in the same run, interleaved so that
# load from elsewhere hits both sides alike.  BENCH_ONLY=docker or modal
# runs one of them.
#
# docker: raw = create + start + wait + remove through the Engine API with
# curl --unix-socket (4 curl calls); vigil = one attempt of the same task
# through vg_backend_docker's run() in a fresh process (connect and
# negotiate, host-access check, image check, create, start, logs into
# files, wait, remove), as each monitor process does.  Target: vigil adds
# at most 10%.  N tasks each (BENCH_N, default 20), against a private
# podman service started by tests/harness/podman-up.
#
# modal: against tests/harness/fake-modal.py on loopback over HTTP/2 with
# TLS (a self-signed certificate trusted through SSL_CERT_FILE on vigil's
# side and as the channel's root on the client's), as api.modal.com is
# reached; BENCH_MODAL_H2C=1 uses h2c instead, where libcurl before 8.0.0
# cannot reuse a connection, so each of vigil's calls opens its own
# (curl issue #10634).  vigil =
# `vigil run` of jobs of K and 2K tasks (BENCH_MODAL_K, default 5) running
# `true`, one at a time (--jobs 1); per task = the difference of their
# wall times over K, so what a run costs once (store, prepare's
# ClientHello) is left out and what each task costs is in (its monitor
# process, records, the attempt's RPCs); the whole run over its tasks is
# printed too.  raw = a minimal client on the same
# generated stubs (python3-grpcio, a channel per task as vigil's monitor
# has) making the same RPC sequence per task: ClientHello once, then
# AppGetOrCreate, ImageGetOrCreate, SecretGetOrCreate, SandboxCreate,
# SandboxGetLogs for fd 1 and 2 side by side to eof, SandboxWait,
# SandboxTerminate.  It stays up between rounds, so its start-up is not
# counted.  BENCH_MODAL_ROUNDS rounds (default 6), interleaved.  Target:
# vigil within 10% of raw.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-$top/build/release}
n=${BENCH_N:-20}

bench_docker() {
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
}

bench_modal() {
	k=${BENCH_MODAL_K:-5}
	rounds=${BENCH_MODAL_ROUNDS:-6}
	py=/usr/bin/python3
	[ -x "$build/vigil" ] || { echo "backends.sh: missing $build/vigil \
(make)" >&2; exit 1; }
	$py -c 'import grpc, grpc_tools' 2>/dev/null || { echo "backends.sh: \
modal needs python3-grpcio and python3-grpc-tools (scripts/deps.sh bench)" \
	    >&2; exit 1; }
	mt=$(mktemp -d /tmp/vigil-bench-modal.XXXXXX)
	trap 'kill $fake_pid $raw_pid 2>/dev/null; rm -rf "$mt"' EXIT
	mkdir -p "$mt/fake" "$mt/gen"
	tls="" scheme=https
	if [ "${BENCH_MODAL_H2C:-0}" = 1 ]; then
		scheme=http
	else
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$mt/key.pem" \
		    -out "$mt/cert.pem" -days 1 -subj /CN=127.0.0.1 \
		    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
		    { echo "backends.sh: openssl could not make a certificate" \
		    >&2; exit 1; }
		tls="--tls $mt/cert.pem $mt/key.pem"
		SSL_CERT_FILE=$mt/cert.pem
		export SSL_CERT_FILE
	fi
	# shellcheck disable=SC2086
	$py "$top/tests/harness/fake-modal.py" --dir "$mt/fake" $tls \
	    --token-id ak-bench --token-secret as-bench 2>"$mt/fake.err" &
	fake_pid=$!
	until [ -s "$mt/fake/port" ]; do sleep 0.1; done
	ep=$scheme://127.0.0.1:$(cat "$mt/fake/port")
	$py -m grpc_tools.protoc -I"$top/proto" --python_out="$mt/gen" \
	    --grpc_python_out="$mt/gen" "$top/proto/modal.proto"
	MODAL_TOKEN_ID=ak-bench MODAL_TOKEN_SECRET=as-bench
	MODAL_CONFIG_PATH=$mt/none.toml VIGIL_HOME=$mt/home
	export MODAL_TOKEN_ID MODAL_TOKEN_SECRET MODAL_CONFIG_PATH VIGIL_HOME
	for j in 1 2; do
		cat >"$mt/job$j.yaml" <<EOM
version: 1
name: bench
backend: modal
image: debian:12
matrix:
  i: [$(seq -s, 1 $((j * k)))]
command: ["true"]
modal:
  endpoint: $ep
EOM
	done
	# The minimal client: one line on stdin runs K tasks and prints the
	# nanoseconds they took.
	cat >"$mt/raw.py" <<'EOP'
import sys
import threading
import time
sys.path.insert(0, sys.argv[1])
import grpc
import modal_pb2 as pb
import modal_pb2_grpc as pbg

ep, k = sys.argv[2], int(sys.argv[3])
root = open(sys.argv[4], "rb").read() if len(sys.argv) > 4 else None


def channel():
    if root is None:
        return grpc.insecure_channel(ep)
    return grpc.secure_channel(ep, grpc.ssl_channel_credentials(root))

md = [("x-modal-client-type", "1"), ("x-modal-client-version", "1.0.0"),
      ("x-modal-token-id", "ak-bench"), ("x-modal-token-secret", "as-bench")]


def logs(stub, sid, fd):
    for b in stub.SandboxGetLogs(pb.SandboxGetLogsRequest(
            sandbox_id=sid, file_descriptor=fd, timeout=55,
            last_entry_id=""), metadata=md):
        if b.eof:
            return


def task(i):
    with channel() as ch:
        s = pbg.ModalClientStub(ch)
        app = s.AppGetOrCreate(pb.AppGetOrCreateRequest(
            app_name="vigil", object_creation_type=1), metadata=md).app_id
        img = s.ImageGetOrCreate(pb.ImageGetOrCreateRequest(
            image=pb.Image(dockerfile_commands=["FROM debian:12"]),
            app_id=app), metadata=md).image_id
        sec = s.SecretGetOrCreate(pb.SecretGetOrCreateRequest(
            object_creation_type=pb.OBJECT_CREATION_TYPE_EPHEMERAL,
            env_dict={"VIGIL_TASK_INDEX": str(i)}), metadata=md).secret_id
        sid = s.SandboxCreate(pb.SandboxCreateRequest(
            app_id=app, definition=pb.Sandbox(
                entrypoint_args=["true"], image_id=img, secret_ids=[sec],
                timeout_secs=86400)), metadata=md).sandbox_id
        th = [threading.Thread(target=logs, args=(s, sid, fd))
              for fd in (1, 2)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        while not s.SandboxWait(pb.SandboxWaitRequest(
                sandbox_id=sid, timeout=10), metadata=md).HasField("result"):
            pass
        s.SandboxTerminate(pb.SandboxTerminateRequest(sandbox_id=sid),
                           metadata=md)


for line in sys.stdin:
    t0 = time.monotonic_ns()
    with channel() as ch:
        pbg.ModalClientStub(ch).ClientHello(pb.Empty(), metadata=md)
    for i in range(k):
        task(i)
    print(time.monotonic_ns() - t0, flush=True)
EOP
	mkfifo "$mt/in" "$mt/out"
	# shellcheck disable=SC2086
	$py "$mt/raw.py" "$mt/gen" "${ep#*://}" "$k" ${tls:+"$mt/cert.pem"} \
	    <"$mt/in" >"$mt/out" &
	raw_pid=$!
	exec 8>"$mt/in" 9<"$mt/out"
	raw_round() { echo go >&8; read -r ns <&9; echo "$ns"; }
	vigil_job() {
		t0=$(date +%s%N)
		"$build/vigil" run -q --jobs 1 "$mt/job$1.yaml" >/dev/null ||
		    { echo "backends.sh: vigil run failed" >&2; exit 1; }
		echo $(($(date +%s%N) - t0))
	}
	# Warm up both (the image is built once, caches filled).
	raw_round >/dev/null
	vigil_job 1 >/dev/null
	vig=0 vig1=0 vig2=0 raw=0 i=1
	while [ $i -le "$rounds" ]; do
		vig1=$((vig1 + $(vigil_job 1)))
		raw=$((raw + $(raw_round)))
		vig2=$((vig2 + $(vigil_job 2)))
		i=$((i + 1))
	done
	exec 8>&- 9<&-
	wait $raw_pid 2>/dev/null
	grep -c '^SandboxCreate' "$mt/fake/requests" >"$mt/creates"
	echo "modal: HTTP/2 over $([ "$scheme" = https ] && echo TLS || echo h2c) to the fake on loopback"
	python3 - "$rounds" "$k" "$raw" "$vig1" "$vig2" "$(cat "$mt/creates")" \
	    <<'EOP'
import sys
rounds, k, raw, vig1, vig2, creates = (int(a) for a in sys.argv[1:7])
n = rounds * k
r = raw / n / 1e6
v1 = vig1 / n / 1e6
v = (vig2 - vig1) / n / 1e6
print(f"modal: {rounds} rounds, interleaved: raw {k} tasks, vigil runs of "
      f"{k} and {2 * k} tasks ({creates} sandboxes in all)")
print(f"modal: raw RPC sequence (python3-grpcio)          {r:8.1f} ms/task")
print(f"modal: vigil run of {k} (whole run / tasks)           {v1:8.1f} ms/task")
print(f"modal: vigil per task (run of {2 * k} - run of {k}) / {k}   {v:8.1f} ms/task")
print(f"modal: ratio vigil/raw          {v / r:6.3f}  (overhead "
      f"{100 * (v / r - 1):+.1f}%, target <= +10%)")
print(f"modal: ratio vigil whole run/raw {v1 / r:6.3f}")
EOP
}

case ${BENCH_ONLY:-all} in
docker)	bench_docker ;;
modal)	bench_modal ;;
*)	(bench_docker) && bench_modal ;;
esac

#!/bin/sh
# Modal backend against tests/harness/fake-modal.py (Modal's gRPC API as
# published, sandboxes run as local processes) and
# tests/harness/fake-modal-gateway.py (the managed gateway's REST
# protocol): credentials resolved at creation (environment, ~/.modal.toml
# profiles, MODAL_PROFILE, active, MODAL_CONFIG_PATH, MODAL_SERVER_URL),
# the three modes and their errors, streams and exit codes, a log stream
# cut mid-task, UNAVAILABLE and throttling retries, timeout, bad
# credentials failing once in prepare, GPU fields, secrets kept out of
# argv and records, reap after SIGKILL, doctor.
set -u
. "$(dirname "$0")/engine-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
# grpc_tools.protoc imports pkg_resources (python3-pkg-resources).
"$top/scripts/deps.sh" python3-grpcio python3-grpc-tools python3-protobuf \
    python3-pkg-resources >/dev/null 2>&1 || true
$PY -c 'import grpc, grpc_tools.protoc' 2>/dev/null || {
	echo "skipped: python3-grpcio and python3-grpc-tools are not installed \
and could not be (run scripts/deps.sh python3-grpcio python3-grpc-tools as \
root)"; exit 77; }
FAKE_PID= GW_PID=
trap 'stop_fake; stop_gw; rm -rf "$W"' EXIT
trap 'exit 1' INT TERM
ID=ak-it$$ SECRET=as-secret$$
unset MODAL_TOKEN_ID MODAL_TOKEN_SECRET MODAL_PROFILE MODAL_SERVER_URL \
    MODAL_ENVIRONMENT MODAL_GATEWAY_URL TOOL_GATEWAY_USER_TOKEN
MODAL_CONFIG_PATH=$W/none.toml; export MODAL_CONFIG_PATH

wait_port() {
	i=0
	until [ -s "$1/port" ]; do
		i=$((i + 1)); [ $i -lt 150 ] || fail "fake did not start: \
$(cat "$1/stderr")"
		sleep 0.1
	done
}
n_fake=0
start_fake() {
	stop_fake
	n_fake=$((n_fake + 1)); FD=$W/fake$n_fake; mkdir -p "$FD"
	$PY "$top/tests/harness/fake-modal.py" --dir "$FD" --token-id "$ID" \
	    --token-secret "$SECRET" "$@" 2>"$FD/stderr" &
	FAKE_PID=$!
	wait_port "$FD"
	EP=http://127.0.0.1:$(cat "$FD/port")
}
stop_fake() { [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null; \
	wait "$FAKE_PID" 2>/dev/null; FAKE_PID=; }
start_gw() {
	stop_gw
	GD=$W/gw; rm -rf "$GD"; mkdir -p "$GD"
	$PY "$top/tests/harness/fake-modal-gateway.py" --dir "$GD" \
	    --token gw-tok$$ "$@" 2>"$GD/stderr" &
	GW_PID=$!
	wait_port "$GD"
	GW=http://127.0.0.1:$(cat "$GD/port")
}
stop_gw() { [ -n "$GW_PID" ] && kill "$GW_PID" 2>/dev/null; \
	wait "$GW_PID" 2>/dev/null; GW_PID=; }

# mf NAME COMMAND [MORE-YAML [SECTION-YAML]]
mf() {
	cat >"$W/$1.yaml" <<EOM
version: 1
name: $1
backend: modal
image: debian:12
command: $2
${3:-}
modal:
  endpoint: ${EP:-http://127.0.0.1:1}
${4:-}
EOM
}
runs() { "$VIGIL" status --json | $PY -c \
    'import json,sys; print(len(json.load(sys.stdin)["runs"]))'; }
run_task() {
	"$VIGIL" run -q --json "$W/$1.yaml" >"$W/$1.json" 2>"$W/$1.err"
	RC=$?
	RUN=$($PY -c 'import json,sys; print(json.load(sys.stdin)["id"])' \
	    <"$W/$1.json") || fail "$1: no status: $(cat "$W/$1.err")"
	"$VIGIL" status "$RUN" --json >"$W/st.json"
	ST=$($PY -c 'import json,sys; t=json.load(sys.stdin)["tasks"][0]
print(t["state"], t["exit_code"])' <"$W/st.json")
	REASON=$($PY -c 'import json,sys
print(json.load(sys.stdin)["tasks"][0]["reason"])' <"$W/st.json")
	OUT=$(cat "$VIGIL_HOME/runs/$RUN/tasks/0/stdout")
	ERR=$(cat "$VIGIL_HOME/runs/$RUN/tasks/0/stderr")
}
direct_env() { MODAL_TOKEN_ID=$ID MODAL_TOKEN_SECRET=$SECRET; \
	export MODAL_TOKEN_ID MODAL_TOKEN_SECRET; }
no_env() { unset MODAL_TOKEN_ID MODAL_TOKEN_SECRET; }

start_fake

# 1. No credentials: validate, run and submit exit 6 (valid, but this
# host cannot run it), no run recorded.
mf ok "'echo \"o \$K\"; echo e >&2; exit 3'" "env:
  K: sekrit-$$
workdir: $W/wd"
"$VIGIL" validate "$W/ok.yaml" >"$W/v" 2>&1
expect_eq "validate without credentials" 6 "$?"
grep -q "modal: mode auto: no credentials for either mode: managed needs \
the gateway URL (modal.gateway_url in a vigil config file, or \
MODAL_GATEWAY_URL) and its token in TOOL_GATEWAY_USER_TOKEN" "$W/v" ||
    fail "validate message: $(cat "$W/v")"
grep -q "direct needs MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or token_id \
and token_secret in profile 'default' of $W/none.toml (no such file" "$W/v" ||
    fail "validate message (direct): $(cat "$W/v")"
"$VIGIL" run -q "$W/ok.yaml" >/dev/null 2>&1
expect_eq "run without credentials" 6 "$?"
"$VIGIL" submit "$W/ok.yaml" >/dev/null 2>&1
expect_eq "submit without credentials" 6 "$?"
expect_eq "no run recorded" 0 "$(runs)"

# 2. Direct from the environment: streams, exit code, environment, workdir.
direct_env
run_task ok
expect_eq "direct exit status" 1 "$RC"
expect_eq "direct state" "FAILED 3" "$ST"
expect_eq "stdout" "o sekrit-$$" "$OUT"
expect_eq "stderr" "e" "$ERR"
grep -q "^SandboxCreate attempt=0 .* client-type=1" "$FD/requests" ||
    fail "no SandboxCreate: $(cat "$FD/requests")"
grep "^app_id" "$FD/requests" | grep 'entrypoint_args' | grep -q sekrit &&
    fail "the secret is in the sandbox's argv"
grep -q "OBJECT_CREATION_TYPE_EPHEMERAL env_dict.*sekrit-$$" \
    "$FD/requests" || fail "no ephemeral secret"
grep -Eq "tag_name: \"vigil-run\" +tag_value: \"$RUN\"" "$FD/requests" ||
    fail "no run tag"
case "$(cat "$W"/*.json "$W"/*.err "$VIGIL_HOME"/runs/*/tasks/*/result.json \
    "$VIGIL_HOME"/runs/*/*.json 2>/dev/null)" in
*"$SECRET"*) fail "the token secret appears in vigil's records" ;;
esac
[ -d "$W/wd" ] || fail "workdir not used"

# 2b. reuse: the key names the image by the id Modal gives it; the same
# image again is a hit, never a new sandbox.
mf re "'echo r'" "reuse: true
workdir: $W/wd"
run_task re
expect_eq "reuse: first run" "SUCCEEDED 0" "$ST"
img=$("$VIGIL" status "$RUN/0" --json | $PY -c 'import json,sys
r = json.load(sys.stdin)["tasks"][0]["reuse"]
print([l for l in r["description"] if l.startswith("image: ")][0])')
case $img in
"image: debian:12 "?*) ;;
*) fail "reuse: the image line: '$img'" ;;
esac
[ "$img" != "image: debian:12 (managed: the gateway names no image id)" ] ||
	fail "reuse: direct mode keyed the image as managed"
creates=$(grep -c "^SandboxCreate" "$FD/requests")
run_task re
expect_eq "reuse: second run" "CACHED 0" "$ST"
expect_eq "reuse: no new sandbox" "$creates" \
    "$(grep -c "^SandboxCreate" "$FD/requests")"

# 3. ~/.modal.toml profiles.
no_env
cat >"$W/m.toml" <<EOM
# profiles
[default]
token_id = "ak-wrong"
token_secret = "as-wrong"
[work]
token_id = "$ID"
token_secret = '$SECRET'
active = true
EOM
MODAL_CONFIG_PATH=$W/m.toml
mf prof "'echo prof'"
run_task prof
expect_eq "active profile" "SUCCEEDED 0" "$ST"
MODAL_PROFILE=default run_task prof
expect_eq "MODAL_PROFILE=default is refused once, in prepare" \
    "BACKEND_ERROR None" "$ST"
case $REASON in
"modal: checking the token (ClientHello): Invalid token id or secret \
(UNAUTHENTICATED); check the Modal token"*) ;;
*) fail "bad credentials reason: $REASON" ;;
esac
sed -i 's/^\[default\]/[default]\nactive = true/' "$W/m.toml"
"$VIGIL" validate "$W/prof.yaml" >"$W/v" 2>&1
expect_eq "two active profiles" 6 "$?"
grep -q "$W/m.toml: profiles 'default' and 'work' are both active = true" \
    "$W/v" || fail "two active: $(cat "$W/v")"
MODAL_PROFILE=work "$VIGIL" validate "$W/prof.yaml" >/dev/null 2>&1 ||
    fail "MODAL_PROFILE does not choose"
printf '[work]\ntoken_id = [1]\n' >"$W/bad.toml"
MODAL_CONFIG_PATH=$W/bad.toml "$VIGIL" validate "$W/prof.yaml" >"$W/v" 2>&1
grep -q "$W/bad.toml: 2:12: arrays and inline tables are not read here" \
    "$W/v" || fail "bad toml: $(cat "$W/v")"
# The profile's server_url, and MODAL_SERVER_URL over it (no endpoint).
printf '[work]\ntoken_id = "%s"\ntoken_secret = "%s"\nserver_url = "%s"\n' \
    "$ID" "$SECRET" "$EP" >"$W/srv.toml"
saved_ep=$EP; EP=; mf srv "'echo srv'"; EP=$saved_ep
sed -i '/endpoint:/d' "$W/srv.yaml"
MODAL_CONFIG_PATH=$W/srv.toml MODAL_PROFILE=work run_task srv
expect_eq "server_url of the profile" "SUCCEEDED 0" "$ST"
MODAL_CONFIG_PATH=$W/srv.toml MODAL_PROFILE=work \
    MODAL_SERVER_URL=http://127.0.0.1:1 run_task srv
expect_eq "MODAL_SERVER_URL wins" "BACKEND_ERROR None" "$ST"
MODAL_CONFIG_PATH=$W/none.toml
direct_env

# 4. A log stream cut mid-task: nothing lost, nothing twice.
start_fake --cut-logs 2
mf cut "'i=0; while [ \$i -lt 3000 ]; do echo line\$i; echo err\$i >&2; \
i=\$((i+1)); [ \$((i % 500)) -eq 0 ] && sleep 0.2; done; exit 4'"
run_task cut
expect_eq "cut state" "FAILED 4" "$ST"
expect_eq "cut stdout" "$(i=0; while [ $i -lt 3000 ]; do echo line$i; \
i=$((i+1)); done)" "$OUT"
expect_eq "cut stderr lines" 3000 "$(echo "$ERR" | sort -u | wc -l)"
[ "$(grep -c '^SandboxGetLogs' "$FD/requests")" -gt 2 ] ||
    fail "the stream was not resumed"

# 5. UNAVAILABLE twice, then RESOURCE_EXHAUSTED with a retry policy twice.
start_fake --unavailable 2 --throttle 2:0.3
mf retry "'echo fifth time'"
t0=$(date +%s%N)
run_task retry
t1=$(date +%s%N)
expect_eq "retried state" "SUCCEEDED 0" "$ST"
expect_eq "retried stdout" "fifth time" "$OUT"
expect_eq "create attempts" "0 1 2 3 4" "$(grep '^SandboxCreate' \
    "$FD/requests" | sed 's/.*attempt=\([0-9]*\).*/\1/' | tr '\n' ' ' |
    sed 's/ $//')"
expect_eq "one idempotency key" 1 "$(grep '^SandboxCreate' "$FD/requests" |
    sed 's/.*key=\([^ ]*\).*/\1/' | sort -u | wc -l)"
[ $(((t1 - t0) / 1000000)) -ge 600 ] || fail "throttle wait not honoured"
MODAL_MAX_THROTTLE_WAIT=0.1 run_task retry
expect_eq "throttle budget" "SUCCEEDED 0" "$ST"

# 6. Timeout: the sandbox is terminated.
start_fake
mf slow "'echo started; sleep 30; echo never'" "timeout: 2s
kill_grace: 1s"
t0=$(date +%s)
run_task slow
t1=$(date +%s)
expect_eq "timeout state" "TIMEOUT" "${ST%% *}"
expect_eq "timeout stdout" "started" "$OUT"
[ $((t1 - t0)) -lt 15 ] || fail "timeout took $((t1 - t0)) s"
grep -q "^SandboxTerminate" "$FD/requests" || fail "not terminated"
pid=$(tail -1 "$FD/sandboxes" | cut -d' ' -f3)
sleep 0.3
kill -0 "$pid" 2>/dev/null && fail "sandbox process $pid still runs"

# 7. GPU fields; a GPU count needs the type.
mf gpu "'true'" "resources:
  gpus: 2
  cpus: 3
  memory: 1GiB" "  gpu: A100-80GB"
run_task gpu
expect_eq "gpu state" "SUCCEEDED 0" "$ST"
tail -1 "$FD/sandboxes" | grep -q "gpu=A100-80GB:2 cpu=3000 mem=1024" ||
    fail "gpu fields: $(tail -1 "$FD/sandboxes")"
mf gpu2 "'true'" "resources:
  gpus: 1"
"$VIGIL" validate "$W/gpu2.yaml" >"$W/v" 2>&1 && fail "gpus without type"
grep -q "resources.gpus: modal needs the GPU type in resources.gpu_type or modal.gpu" "$W/v" ||
    fail "gpu message: $(cat "$W/v")"

# 8. Reap: a sandbox whose vigil and monitor were SIGKILLed goes.
mf long "'echo started; sleep 60'"
: >"$FD/sandboxes"
"$VIGIL" run -q "$W/long.yaml" >/dev/null 2>&1 &
dead=$!
i=0
until [ -s "$FD/sandboxes" ]; do
	i=$((i + 1)); [ $i -lt 150 ] || fail "no sandbox to reap"; sleep 0.1
done
set -- $(cat "$FD/sandboxes")
box=$1 monitor=$(echo "$2" | cut -d: -f2)
kill -9 $dead "$monitor"; wait $dead 2>/dev/null
MODAL_SERVER_URL=$EP "$VIGIL" gc --older-than 1000d >"$W/gc.out" 2>"$W/gc.err"
grep -q "^modal: removed sandbox $box (run " "$W/gc.out" ||
    fail "gc did not reap: $(cat "$W/gc.out" "$W/gc.err")"

# 9. Managed mode through the gateway; config only; auto prefers it.
start_gw
TOOL_GATEWAY_USER_TOKEN=gw-tok$$; export TOOL_GATEWAY_USER_TOKEN
mf man "'echo \"m \$K\"; pwd; exit 5'" "env:
  K: gw-$$" "  mode: managed"
mkdir -p "$W/cfg"
printf 'modal:\n  gateway_url: %s\n' "$GW" >"$W/cfg/config.yaml"
VIGIL_USER_CONFIG=$W/cfg/config.yaml; export VIGIL_USER_CONFIG
run_task man
expect_eq "managed state" "FAILED 5" "$ST"
expect_eq "managed output" "m gw-$$
/root" "$OUT"
grep -q '^POST /v1/sandboxes key=.*"logicalKey": "'"$RUN"'-0-1"' \
    "$GD/requests" || fail "create: $(cat "$GD/requests")"
grep '"command"' "$GD/requests" | grep -q "gw-$$\"*, \"cwd\"" &&
    fail "environment in the command"
grep -q "^POST /v1/sandboxes/sb-[^/]*/terminate" "$GD/requests" ||
    fail "not terminated"
mf auto "'echo auto'"
run_task auto
expect_eq "auto with a ready gateway" "SUCCEEDED 0 auto" "$ST $OUT"
expect_eq "auto went to the gateway" 2 "$(grep -c '^POST /v1/sandboxes key' \
    "$GD/requests")"
start_gw --not-ready
printf 'modal:\n  gateway_url: %s\n' "$GW" >"$W/cfg/config.yaml"
run_task auto
expect_eq "auto falls back to direct" "SUCCEEDED 0 auto" "$ST $OUT"
run_task man
expect_eq "managed never falls back" "BACKEND_ERROR None" "$ST"
case $REASON in
*"checking the gateway (GET /v1/health): gateway not ready (HTTP 503"*) ;;
*) fail "not ready reason: $REASON" ;;
esac
env -u TOOL_GATEWAY_USER_TOKEN "$VIGIL" validate "$W/man.yaml" >"$W/v" 2>&1
grep -q "modal: mode managed: missing its token in TOOL_GATEWAY_USER_TOKEN" \
    "$W/v" || fail "managed without token: $(cat "$W/v")"
mf inman "'true'" "" "  gateway_url: http://x"
"$VIGIL" validate "$W/inman.yaml" >"$W/v" 2>&1 && fail "gateway in manifest"
grep -q "modal.gateway_url.: set it in a vigil config file" "$W/v" ||
    fail "config only: $(cat "$W/v")"
unset VIGIL_USER_CONFIG TOOL_GATEWAY_USER_TOKEN

# 10. doctor: mode and where the credentials come from, never values.
MODAL_SERVER_URL=$EP "$VIGIL" doctor -b modal >"$W/doc"
grep -qx "modal: ok (mode auto -> direct, server $EP, credentials from \
MODAL_TOKEN_ID and MODAL_TOKEN_SECRET)" "$W/doc" || fail "doctor: $(cat "$W/doc")"
grep -q "$SECRET" "$W/doc" && fail "doctor shows the secret"
no_env
"$VIGIL" doctor -b modal >"$W/doc"
grep -q "^modal: missing (modal: mode auto: no credentials" "$W/doc" ||
    fail "doctor without: $(cat "$W/doc")"

# 11. HTTP/2 over TLS (a self-signed certificate, trusted through
# SSL_CERT_FILE): the attempt's calls share one connection, streams
# multiplexed on it; over h2c libcurl before 8.0.0 gets one per call.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/key.pem" \
    -out "$W/cert.pem" -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
    fail "openssl could not make a certificate"
start_fake --tls "$W/cert.pem" "$W/key.pem"
direct_env
EP=https://127.0.0.1:$(cat "$FD/port")
mf tls "'echo o; echo e >&2'"
VIGIL_GRPC_DEBUG=1 SSL_CERT_FILE=$W/cert.pem run_task tls
expect_eq "tls state" "SUCCEEDED 0" "$ST"
expect_eq "tls streams" "o e" "$OUT $ERR"
# One connection for prepare's ClientHello, one for the attempt.
expect_eq "tls connections" 2 "$(grep -ac '^\* Connected to' "$W/tls.err")"
[ "$(grep -ac '^\* Re-using existing connection' "$W/tls.err")" -ge 6 ] ||
    fail "tls: calls not on one connection: $(grep -a '^\*' "$W/tls.err")"
run_task tls
expect_eq "untrusted certificate" "BACKEND_ERROR" "${ST% *}"
case $REASON in
*ClientHello*certificate*|*ClientHello*SSL*) ;;
*) fail "untrusted certificate: reason '$REASON'" ;;
esac
start_fake
EP=http://127.0.0.1:$(cat "$FD/port")
mf h2c "'echo o'"
VIGIL_GRPC_DEBUG=1 run_task h2c
expect_eq "h2c state" "SUCCEEDED 0" "$ST"
conns=$(grep -ac '^\* Connected to' "$W/h2c.err")
calls=$(grep -ac '^\* Using Stream ID' "$W/h2c.err")
if [ "$(curl-config --vernum 2>/dev/null || echo 075801)" \< 080000 ]; then
	expect_eq "h2c: one connection per call" "$calls" "$conns"
else
	expect_eq "h2c connections" 2 "$conns"
fi

# 12. The committed generated code is that of proto/modal.proto.
if command -v protoc-c >/dev/null; then
	mkdir -p "$W/gen"
	protoc-c --proto_path="$top/proto" --c_out="$W/gen" \
	    "$top/proto/modal.proto"
	sed -i 's|^#include "modal.pb-c.h"|#include "backends/modal.pb-c.h"|' \
	    "$W/gen/modal.pb-c.c"
	cmp -s "$W/gen/modal.pb-c.c" "$top/backends/modal.pb-c.c" &&
	    cmp -s "$W/gen/modal.pb-c.h" "$top/backends/modal.pb-c.h" ||
	    fail "backends/modal.pb-c.* are stale: run make proto"
fi
# 13. outputs: the command runs with ContainerExec in an idle sandbox
# (streams, environment and exit code as before), its files come back
# through ContainerFilesystemExec, a link stays behind (said in
# outputs.json), a file over max_bytes too, and the sandbox is
# terminated after; a task without outputs makes none of those calls.
start_fake
direct_env
mf outs "|
  mkdir -p res/sub
  printf 'a\\nb\\n' >res/a.txt
  printf '\\001\\000\\377z' >res/sub/b.dat
  echo one >one.csv
  head -c 3000 /dev/zero >big.csv
  echo no >other.log
  ln -s /etc/passwd res/link
  echo \"o \$K\"; echo e >&2; exit 3" "env:
  K: k$$
workdir: $W/owd
outputs:
  paths: [\"res\", \"*.csv\"]
  max_bytes: 2000"
run_task outs
expect_eq "outputs state ($REASON)" "FAILED 3" "$ST"
expect_eq "outputs stdout" "o k$$" "$OUT"
expect_eq "outputs stderr" "e" "$ERR"
o=$VIGIL_HOME/runs/$RUN/tasks/0/outputs
expect_eq "outputs collected" "one.csv 4
res/a.txt 4
res/sub/b.dat 4" "$( [ -d "$o" ] && cd "$o" && find . -type f |
    sed 's|^\./||' | sort | while read -r f; do echo "$f $(wc -c <"$f")"
    done)"
expect_eq "outputs binary bytes" "$(printf '\001\000\377z' | od -An -tx1)" \
    "$(od -An -tx1 <"$o/res/sub/b.dat" 2>&1)"
expect_eq "outputs in status" "one.csv res/a.txt res/sub/b.dat" \
    "$($PY -c 'import json,sys
t=json.load(sys.stdin)["tasks"][0]["outputs"]
print(" ".join(sorted(f["path"] for f in t["files"])))' <"$W/st.json")"
expect_eq "outputs left" "remote big.csv over outputs.max_bytes
remote res/link a symbolic link (left in the sandbox)" "$($PY -c '
import json,sys
for s in sorted(json.load(open(sys.argv[1]))["skipped"],
                key=lambda s: s["path"]):
    print(s["from"], s["path"], s["why"])' \
    "$VIGIL_HOME/runs/$RUN/tasks/0/outputs.json")"
for m in SandboxGetTaskId ContainerExec ContainerExecGetOutput \
    ContainerExecWait ContainerFilesystemExec \
    ContainerFilesystemExecGetOutput SandboxTerminate; do
	grep -q "^$m attempt=" "$FD/requests" || fail "outputs: no $m"
done
grep -q "entrypoint_args: \"sleep\"" "$FD/requests" ||
    fail "outputs: the sandbox's entrypoint is not idle"
grep -q "^ContainerExecWait" "$FD/requests" &&
    ! grep -q "^SandboxWait" "$FD/requests" ||
    fail "outputs: the exit code is not the exec's"
pid=$(awk 'NR == 1 {print $3}' "$FD/sandboxes")
kill -0 "$pid" 2>/dev/null && fail "outputs: the sandbox was left running"
# Without outputs: the command is the entrypoint, no exec or file calls.
start_fake
mf noouts "'echo plain'"
run_task noouts
expect_eq "no outputs state" "SUCCEEDED 0" "$ST"
expect_eq "no outputs stdout" "plain" "$OUT"
grep -Eq "^(SandboxGetTaskId|ContainerExec|ContainerFilesystemExec)" \
    "$FD/requests" && fail "a task without outputs made exec calls"
# The listing cannot run (the command removed its working directory):
# said in the reason, the outcome stays, the sandbox is terminated.
mf gone "'rm -rf \"\$PWD\"; echo gone'" "workdir: $W/gone
outputs: [\"*.txt\"]"
run_task gone
expect_eq "listing fails: state" "SUCCEEDED 0" "$ST"
case $REASON in
*"outputs not brought back: "*ContainerExec*) ;;
*) fail "listing fails: reason '$REASON'" ;;
esac
pid=$(awk 'END {print $3}' "$FD/sandboxes")
kill -0 "$pid" 2>/dev/null && fail "listing fails: the sandbox was left"
pass

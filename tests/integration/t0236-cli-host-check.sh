#!/bin/sh
# t0236-cli-host-check: `vigil validate` and `vigil run --dry-run` judge
# every backend alike.  A valid manifest this host cannot run (a docker
# engine socket that is not there, no apptainer binary, a cloud token
# not set, GPUs asked on a host with none, an ssh host that does not
# answer or no key, no Slurm commands) is reported under "this host cannot run
# it:", apart from manifest errors, with exit status 6; --dry-run still
# lists every task; `vigil run` (and `vigil session start`) refuses it
# before recording anything.
# A manifest error keeps exit 2 and no such section; a valid local
# manifest exits 0.
set -u
. "$(dirname "$0")/engine-lib.sh"
SECTION="this host cannot run it:"
unset DAYTONA_API_KEY CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES \
    HIP_VISIBLE_DEVICES VIGIL_APPTAINER SSH_AUTH_SOCK
mkdir -p "$W/nobin"
: >"$W/x.sif"

# mf NAME BACKEND-LINES: a three-task sweep with the given lines.
mf() {
	_n=$1
	shift
	{
		printf 'version: 1\nname: %s\nmatrix:\n  i: [1, 2, 3]\n' "$_n"
		printf 'command: "echo ${{ matrix.i }}"\n'
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$W/$_n.yaml"
}

# judge NAME WHAT [ENV...]: validate and dry-run of $W/NAME.yaml with the
# environment ENV; both exit 6 with the section naming WHAT, dry-run
# lists all three tasks, and run refuses it recording nothing.
judge() {
	_n=$1 _what=$2
	shift 2
	env "$@" "$VIGIL" validate "$W/$_n.yaml" >"$W/out" 2>"$W/err"
	expect_eq "$_n: validate exit" 6 "$?"
	expect_eq "$_n: validate stderr" "" "$(cat "$W/err")"
	expect_eq "$_n: validate head" \
	    "$W/$_n.yaml: valid (3 tasks); $SECTION" "$(head -1 "$W/out")"
	grep -q "^  $_what" "$W/out" ||
	    fail "$_n: validate section: $(cat "$W/out")"
	env "$@" "$VIGIL" validate --json "$W/$_n.yaml" >"$W/out" 2>&1
	expect_eq "$_n: validate --json exit" 6 "$?"
	python3 - "$W/out" "${_what%%:*}:" <<'PY' || fail "$_n: json: $(cat "$W/out")"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
assert d["ok"] is True and d["runnable"] is False, d
assert f["ok"] is True and f["runnable"] is False and f["errors"] == [], f
assert any(l.startswith(sys.argv[2]) for l in f["cannot_run"]), f
PY
	env "$@" "$VIGIL" run --dry-run "$W/$_n.yaml" >"$W/out" 2>"$W/err"
	expect_eq "$_n: dry-run exit" 6 "$?"
	expect_eq "$_n: dry-run tasks" "0 1 2" "$(awk '/^[0-9]+ +allow/ \
	    { printf "%s%s", s, $1; s = " " }' "$W/out")"
	grep -qx "$SECTION" "$W/out" || fail "$_n: dry-run: $(cat "$W/out")"
	grep -q "^  $_what" "$W/out" || fail "$_n: dry-run: $(cat "$W/out")"
	env "$@" "$VIGIL" run --dry-run --json "$W/$_n.yaml" >"$W/out" 2>&1
	expect_eq "$_n: dry-run --json exit" 6 "$?"
	python3 - "$W/out" <<'PY' || fail "$_n: dry-run json: $(cat "$W/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["tasks"]) == 3 and d["runnable"] is False, d
assert d["cannot_run"], d
PY
	before=$(ls "$VIGIL_HOME/runs" 2>/dev/null | wc -l)
	env "$@" "$VIGIL" run -q "$W/$_n.yaml" >"$W/out" 2>"$W/err"
	expect_eq "$_n: run exit" 6 "$?"
	grep -q "^vigil: $W/$_n.yaml: valid, but nothing was recorded: \
$SECTION" "$W/err" || fail "$_n: run: $(cat "$W/err")"
	expect_eq "$_n: no run recorded" "$before" \
	    "$(ls "$VIGIL_HOME/runs" 2>/dev/null | wc -l)"
}

# docker: the engine socket DOCKER_HOST names is not there.
mf docker "backend: docker" "image: alpine:3"
judge docker "docker: connecting to the engine: GET /_ping on \
unix://$W/no-engine.sock: cannot connect" DOCKER_HOST="unix://$W/no-engine.sock"
# ... nor the one docker.host names.
mf dockerhost "backend: docker" "image: alpine:3" "docker:" \
    "  host: unix://$W/gone.sock"
judge dockerhost "docker: .*unix://$W/gone.sock" \
    DOCKER_HOST="unix://$W/no-engine.sock"

# apptainer: no binary in $PATH; a configured binary that is missing.
mf app "backend: apptainer" "image: $W/x.sif"
judge app "apptainer: neither 'apptainer' nor 'singularity' is in \
\\\$PATH ($W/nobin)" PATH="$W/nobin"
mf appbin "backend: apptainer" "image: $W/x.sif" "singularity:" \
    "  binary: $W/no-apptainer"
judge appbin "apptainer: singularity.binary '$W/no-apptainer' is not an \
executable file"

# a cloud backend without its token.
mf cloud "backend: daytona" "image: python:3.12-slim"
judge cloud "daytona: no API token: environment variable DAYTONA_API_KEY \
is not set (daytona.token_env names the variable to read)"

# ... and no session starts there either.
"$VIGIL" session start --backend daytona --image python:3.12-slim \
    >"$W/out" 2>"$W/err"
expect_eq "session without token: exit" 6 "$?"
grep -q "^  daytona: no API token" "$W/err" || fail "session: $(cat "$W/err")"

# GPUs on this host, which has none (no nvidia-smi, rocm-smi in $PATH).
mf gpus "resources:" "  gpus: 1"
judge gpus "resources: task 0 (and every other task) asks gpus: 1, the \
pool has 0" PATH="$W/nobin"

# ssh: a host whose port does not answer (a port nobody listens on).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
: >"$W/id_test"
mf ssh "backend: ssh" "ssh:" "  host: 127.0.0.1" "  port: $port" \
    "  identity: $W/id_test"
judge ssh "ssh: host '127.0.0.1' port $port is unreachable from here \
(Connection refused"

# ssh: no key at all (no ssh.identity, no agent, no ~/.ssh/id_*).
mkdir -p "$W/empty-home"
mf sshkey "backend: ssh" "ssh:" "  host: 127.0.0.1" "  port: $port"
judge sshkey "ssh: no key: no ssh.identity, no agent (SSH_AUTH_SOCK unset)" \
    HOME="$W/empty-home"

# slurm: no sbatch or squeue here (the backend is the nodes' concern).
mf slurm "scheduler: slurm"
judge slurm "slurm: 'sbatch' is not in \\\$PATH ($W/nobin)" PATH="$W/nobin"

# A manifest error wins: exit 2, the error on stderr, no section.
mf bad "backend: docker" "image: alpine:3" "timeout: soon"
DOCKER_HOST="unix://$W/no-engine.sock" "$VIGIL" validate "$W/bad.yaml" \
    >"$W/out" 2>"$W/err"
expect_eq "manifest error exit" 2 "$?"
grep -q "^$W/bad.yaml:[0-9]*:[0-9]*: " "$W/err" ||
    fail "manifest error: $(cat "$W/err")"
grep -q "$SECTION" "$W/out" "$W/err" && fail "section with an error"

# A valid local manifest: exit 0, ok, no section, and it runs.
mf local
"$VIGIL" validate "$W/local.yaml" >"$W/out" 2>&1
expect_eq "local validate exit" 0 "$?"
expect_eq "local validate" "$W/local.yaml: ok (3 tasks)" "$(cat "$W/out")"
"$VIGIL" run --dry-run "$W/local.yaml" >"$W/out" 2>&1
expect_eq "local dry-run exit" 0 "$?"
grep -q "$SECTION" "$W/out" && fail "local dry-run: $(cat "$W/out")"
"$VIGIL" run -q "$W/local.yaml" >/dev/null 2>&1
expect_eq "local run exit" 0 "$?"
pass

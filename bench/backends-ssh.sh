#!/bin/sh
# backends-ssh.sh [BUILD_DIR] - per-task overhead of vigil's ssh backend
# over one `ssh host true`, measured in the same run against a private
# sshd on loopback (tests/harness/sshd-up), interleaved so that load from
# elsewhere hits both sides alike.
#
# raw   = OpenSSH's client: connect, key exchange, host key check, public
#         key auth, one exec of `true`, exit status (ssh -F /dev/null, so
#         no config, no multiplexing).
# vigil = `vigil run -q` of a one-task manifest (backend: ssh, command:
#         true): the whole CLI (manifest, policy gate, sqlite state,
#         monitor process), the same connect and auth through libssh,
#         SFTP for the attempt dir, env and wrapper, one exec that starts
#         the detached wrapper, status polling and output tailing over
#         SFTP, and removal of the remote dir.
# batch = one `vigil run -j 1` of N such tasks, against N raw ssh calls.
# Target: vigil adds at most 10%.  N tasks each (BENCH_N, default 10).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-$top/build/release}
n=${BENCH_N:-10}
VIGIL=$build/vigil
[ -x "$VIGIL" ] || { echo "backends-ssh.sh: missing $VIGIL (make)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/vigil-bench-ssh.XXXXXX)
trap '"$top/tests/harness/sshd-down" "$tmp/sshd"; rm -rf "$tmp"' EXIT
eval "$("$top/tests/harness/sshd-up" "$tmp/sshd" 2>/dev/null)"
VIGIL_HOME=$tmp/home
export VIGIL_HOME
unset SSH_AUTH_SOCK
mkdir -p "$VIGIL_HOME" "$tmp/remote"

manifest() {
	cat <<YAML
version: 1
name: bench-ssh
backend: ssh
command: "true"
ssh:
  host: 127.0.0.1
  port: $SSHD_PORT
  user: $SSHD_USER
  identity: $SSHD_KEY
  known_hosts: $SSHD_KNOWN_HOSTS
  remote_dir: $tmp/remote
YAML
	[ "${1:-1}" -gt 1 ] && printf 'matrix:\n  i: [%s]\n' \
		"$(seq -s, 1 "$1")"
	return 0
}
manifest 1 >"$tmp/one.yaml"
manifest "$n" >"$tmp/batch.yaml"

now_ns() { date +%s%N; }
raw_task() {
	ssh -F /dev/null -p "$SSHD_PORT" -i "$SSHD_KEY" \
		-o UserKnownHostsFile="$SSHD_KNOWN_HOSTS" -o BatchMode=yes \
		"$SSHD_USER@127.0.0.1" true
}
vigil_task() {
	"$VIGIL" run -q "$tmp/one.yaml" >/dev/null
}

# Warm up both paths once (page cache, sshd's first fork).
raw_task
vigil_task

raw=0 vig=0 i=1
while [ $i -le "$n" ]; do
	t0=$(now_ns); raw_task; t1=$(now_ns)
	vigil_task; t2=$(now_ns)
	raw=$((raw + t1 - t0))
	vig=$((vig + t2 - t1))
	i=$((i + 1))
done

t0=$(now_ns)
i=1
while [ $i -le "$n" ]; do raw_task; i=$((i + 1)); done
t1=$(now_ns)
"$VIGIL" run -q -j 1 "$tmp/batch.yaml" >/dev/null
t2=$(now_ns)

python3 - "$n" "$raw" "$vig" "$((t1 - t0))" "$((t2 - t1))" <<'PY'
import sys
n, raw, vig, braw, bvig = (int(x) for x in sys.argv[1:])
r, v = raw / n / 1e6, vig / n / 1e6
br, bv = braw / n / 1e6, bvig / n / 1e6
print(f"ssh: {n} tasks each, interleaved, one vigil run per task")
print(f"ssh: raw `ssh host true`    {r:8.1f} ms/task")
print(f"ssh: vigil run (1 task)     {v:8.1f} ms/task")
print(f"ssh: ratio vigil/raw        {v / r:8.3f}  (overhead {100 * (v / r - 1):+.1f}%, target <= +10%)")
print(f"ssh: {n} raw calls vs one vigil run -j 1 of {n} tasks")
print(f"ssh: raw `ssh host true`    {br:8.1f} ms/task")
print(f"ssh: vigil run (batch)      {bv:8.1f} ms/task")
print(f"ssh: ratio vigil/raw        {bv / br:8.3f}  (overhead {100 * (bv / br - 1):+.1f}%, target <= +10%)")
PY

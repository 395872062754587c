#!/bin/sh
# sessions.sh - per-command overhead of a warm session (vigil exec
# --session ID -- CMD) against the same command run directly in the same
# sandbox:
#   local   baseline: /bin/sh -c CMD by plain fork/exec from this shell;
#           measured: vigil exec --session in a local session (gate,
#           audit, job directory, the confined shim, the state wrapper)
#   docker  baseline: a raw Engine API exec with curl (POST
#           /containers/ID/exec, POST /exec/ID/start, GET /exec/ID/json)
#           in the session's own container; measured: vigil exec
#           --session in that session
# Prints the mean per command of each, the overhead in ms and the ratio
# (targets: local +5 ms; docker +50 ms and at most 1.20x), and `vigil
# version` as the cost of starting a vigil process at all on this host.
# Runs are interleaved in blocks so that the load of a shared machine
# hits both alike; the load average is printed at the start and the end.  N=40 commands by default; DOCKER=0 skips docker
# (it starts podman through tests/harness/podman-up).  Measurements taken
# with it are in bench/README.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-40}
BLOCK=${BLOCK:-10}
B=${B:-$top/build/release}
VIGIL=$B/vigil
[ -x "$VIGIL" ] || make -C "$top" --no-print-directory >/dev/null
tmp=$(mktemp -d /tmp/vigil-bench-sess.XXXXXX)
export VIGIL_HOME=$tmp/home
pm_up=0
cleanup() {
	for s in $(sqlite3 "$VIGIL_HOME/vigil.db" \
	    "select id from sessions where ended = 0" 2>/dev/null); do
		"$VIGIL" session stop "$s" >/dev/null 2>&1 || true
	done
	[ $pm_up -eq 1 ] && "$top/tests/harness/podman-down" "$tmp/pm"
	rm -rf "$tmp"
}
trap cleanup EXIT
CMD=${CMD:-true}

now() { date +%s%N; }
# ms with two decimals from nanoseconds / count
per() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.2f", t / n / 1e6 }'; }

# bench NAME BASELINE-FN MEASURED-FN: interleaved blocks; sets B_MS, M_MS.
bench() {
	tb=0 tm=0 i=0
	while [ $i -lt "$N" ]; do
		t0=$(now); j=0
		while [ $j -lt "$BLOCK" ]; do "$2"; j=$((j + 1)); done
		t1=$(now); j=0
		while [ $j -lt "$BLOCK" ]; do "$3"; j=$((j + 1)); done
		t2=$(now)
		tb=$((tb + t1 - t0)); tm=$((tm + t2 - t1))
		i=$((i + BLOCK))
	done
	B_MS=$(per $tb "$N"); M_MS=$(per $tm "$N")
	awk -v n="$1" -v b="$B_MS" -v m="$M_MS" 'BEGIN {
	    printf "%-7s baseline %8.2f ms  vigil %8.2f ms  overhead %+8.2f ms  ratio %.2fx\n",
	    n, b, m, m - b, m / b }'
}

# The load average while it runs: the numbers mean little without it.
load() { echo "load average ($1): $(cut -d' ' -f1-3 /proc/loadavg)"; }
trap 'load end; cleanup' EXIT
load start

v_version() { "$VIGIL" version >/dev/null; }
t0=$(now); i=0
while [ $i -lt "$N" ]; do v_version; i=$((i + 1)); done
echo "vigil version (a vigil process start): $(per $(( $(now) - t0 )) "$N") ms"

# local
sid=$("$VIGIL" session start)
"$VIGIL" exec --session "$sid" -- "$CMD" >/dev/null
local_base() { /bin/sh -c "$CMD" >/dev/null; }
local_vigil() { "$VIGIL" exec --session "$sid" -- "$CMD" >/dev/null; }
bench local local_base local_vigil

[ "${DOCKER:-1}" = 1 ] || exit 0
"$top/tests/harness/podman-up" "$tmp/pm" >"$tmp/pm.log" 2>&1 ||
    { echo "docker: podman could not start (see podman-up)"; exit 1; }
pm_up=1
sock=$tmp/pm/podman.sock
export DOCKER_HOST=unix://$sock
did=$("$VIGIL" session start --backend docker --image localhost/vigil-test)
"$VIGIL" exec --session "$did" -- "$CMD" >/dev/null
ct=$(sqlite3 "$VIGIL_HOME/vigil.db" \
    "select handle from sessions where id = '$did'" | cut -d/ -f2)
api() { curl -s --unix-socket "$sock" "$@"; }
docker_base() {
	e=$(api -X POST -H 'Content-Type: application/json' \
	    -d "{\"AttachStdout\":true,\"AttachStderr\":true,\"Cmd\":[\"/bin/sh\",\"-c\",\"$CMD\"]}" \
	    "http://d/v1.41/containers/$ct/exec" | sed 's/.*"Id":"\([0-9a-f]*\)".*/\1/')
	api -X POST -H 'Content-Type: application/json' -d '{"Detach":false,"Tty":false}' \
	    "http://d/v1.41/exec/$e/start" >/dev/null
	api "http://d/v1.41/exec/$e/json" >/dev/null
}
docker_vigil() { "$VIGIL" exec --session "$did" -- "$CMD" >/dev/null; }
bench docker docker_base docker_vigil

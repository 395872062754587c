# shellcheck shell=sh
# gridengine-lib.sh - sourced by the t076x tests: brings up the private
# Grid Engine cell of tests/harness/sge-up (a lease keeps it up while
# another test holds it), a private VIGIL_HOME and work dir, and tears
# everything down on exit.  Helpers assert exact values.
# Sourced from tests/security too: $it_dir, when set, names this folder.
here=${it_dir:-$(cd "$(dirname "$0")" && pwd)}
harness=$(cd "$here/../harness" && pwd)
[ "$(id -u)" = 0 ] || { echo "needs root (Grid Engine's execd)"; exit 77; }
W=$(mktemp -d /tmp/vigil-ge-it-XXXXXX)
chmod 0755 "$W"
VIGIL_HOME=$W/home
export VIGIL_HOME
VIGIL_SGE_LEASE=$$
export VIGIL_SGE_LEASE
cleanup() {
	# Jobs of this test's runs must not outlive it while a lease keeps
	# the cell up.
	for r in "$VIGIL_HOME"/runs/*/gridengine/jobs; do
		[ -f "$r" ] || continue
		for j in $(sed -n '/^[0-9]/s/.* \([0-9]*\)\..*/\1/p' "$r" | sort -u); do
			qdel "$j" >/dev/null 2>&1
		done
	done
	"$harness/sge-down" >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$here/status-lib.sh"
env=$("$harness/sge-up") || fail "sge-up failed"
eval "$env"
# ge_yaml FILE NAME N COMMAND [TOP [RES [GE]]]: a manifest of N one-CPU
# tasks (matrix i: 0..N-1) on the gridengine scheduler, polled every
# 1-2 s; TOP more top-level YAML, RES more lines under resources:, GE
# more under gridengine: ("key: value" lines).
ge_yaml() {
	{
		printf 'version: 1\nname: %s\nscheduler: gridengine\n' "$2"
		printf 'matrix:\n  i: [%s]\n' "$(seq -s, 0 $(($3 - 1)))"
		printf 'resources:\n  cpus: 1\n'
		[ -z "${6:-}" ] || printf '%s\n' "$6" | sed 's/^/  /'
		printf 'gridengine:\n  poll_min: 1s\n  poll_max: 2s\n'
		[ -z "${7:-}" ] || printf '%s\n' "$7" | sed 's/^/  /'
		[ -z "${5:-}" ] || printf '%s\n' "$5"
		printf 'command: %s\n' "$4"
	} >"$1"
}
# qacct_get JOB TASK FIELD: FIELD of JOB's TASK in the accounting file.
qacct_get() {
	qacct -j "$1" 2>/dev/null | awk -v t="$2" -v f="$3" '
	    /^=/ { task = "" } $1 == "taskid" { task = $2 }
	    $1 == f && task == t { $1 = ""; sub(/^ /, ""); print; exit }'
}

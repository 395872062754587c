# slurm-lib.sh - sourced by the t07xx tests: brings up the private Slurm
# cluster of tests/harness/slurm-up (with accounting unless
# SLURM_UP_ARGS=--no-accounting), a private VIGIL_HOME and work dir, and
# tears everything down on exit.  Helpers assert exact values.
# SLURM_HARNESS=slurm-cluster picks the three-node cluster of
# tests/harness/slurm-cluster-up instead (t072x).
here=${it_dir:-$(cd "$(dirname "$0")" && pwd)}
harness=$(cd "$here/../harness" && pwd)
W=$(mktemp -d /tmp/vigil-slurm-it-XXXXXX)
chmod 0755 "$W"
VIGIL_HOME=$W/home
export VIGIL_HOME
# A private bucket: other runs on this host do not slow the tests down.
VIGIL_SLURM_BUCKET=$W/bucket
export VIGIL_SLURM_BUCKET
# A lease: a suite running next to this one keeps the cluster up.
VIGIL_SLURM_LEASE=$$
export VIGIL_SLURM_LEASE
cleanup() {
	# Jobs of this test's runs (named after them) must not outlive it
	# when a lease keeps the cluster up.
	for r in "$VIGIL_HOME"/runs/*; do
		[ -d "$r" ] && scancel --name="${r##*/}" >/dev/null 2>&1
	done
	"$harness/${SLURM_HARNESS:-slurm}-down" >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$here/status-lib.sh"
# shellcheck disable=SC2086
env=$("$harness/${SLURM_HARNESS:-slurm}-up" ${SLURM_UP_ARGS:-}) ||
	fail "${SLURM_HARNESS:-slurm}-up failed"
eval "$env"
# sacct_get JOB FIELD: the first line of sacct's FIELD of JOB's allocation,
# waiting up to 30 s for slurmdbd to have the record (the controller
# sends it on its own schedule, later than the job's end under load).
sacct_get() {
	_n=0
	while :; do
		_v=$(sacct -X -n -P -j "$1" -o "$2" 2>/dev/null | head -n 1)
		[ -n "$_v" ] || [ $_n -ge 60 ] && break
		sleep 0.5; _n=$((_n + 1))
	done
	echo "$_v"
}
# start_sleepers NAME: runs $W/c.yaml (3 array elements of sleep 300,
# named NAME) in the background until 2 of them run; sets vpid (the
# driving vigil), id (the run) and job (its array job id).
start_sleepers() {
	cat >"$W/c.yaml" <<Y
version: 1
name: $1
scheduler: slurm
matrix:
  i: [0, 1, 2]
resources:
  cpus: 1
slurm:
  poll_min: 1s
  poll_max: 2s
command: sleep 300
Y
	"$VIGIL" run -q "$W/c.yaml" >"$W/out" 2>&1 &
	vpid=$!
	id=$(wait_run)
	wait_count "$id" RUNNING 2 30
	job=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
	job=${job%%_*}
}
# slurm_yaml FILE NAME N COMMAND [TOP [RES [SLURM]]]: writes a manifest
# of N one-CPU tasks (matrix i: 0..N-1) on the slurm scheduler through
# the commands, polled every 1-2 s; TOP is more top-level YAML, RES more
# lines under resources:, SLURM more under slurm: (each "key: value"
# lines, indented by the caller when nested).
slurm_yaml() {
	{
		printf 'version: 1\nname: %s\nscheduler: slurm\n' "$2"
		printf 'matrix:\n  i: [%s]\n' "$(seq -s, 0 $(($3 - 1)))"
		printf 'resources:\n  cpus: 1\n'
		[ -z "${6:-}" ] || printf '%s\n' "$6" | sed 's/^/  /'
		printf 'slurm:\n  interface: cli\n  poll_min: 1s\n  poll_max: 2s\n'
		[ -z "${7:-}" ] || printf '%s\n' "$7" | sed 's/^/  /'
		[ -z "${5:-}" ] || printf '%s\n' "$5"
		printf 'command: %s\n' "$4"
	} >"$1"
}
# kill_node NODE RUN/TASK SECS: kills every process of NODE's namespace
# (its slurmd, slurmstepd, task-exec, the tasks), waits up to SECS for
# `vigil status RUN/TASK` to show attempt 1 NODE_FAIL (Slurm marks the
# node DOWN after SlurmdTimeout), prints how long that took, and starts
# the node again for the tests after this one.
kill_node() {
	_t0=$(date +%s)
	_pids=$(ip netns pids "vgc-$1")
	[ -n "$_pids" ] || fail "no process in the namespace of $1"
	# shellcheck disable=SC2086
	kill -9 $_pids
	_i=0
	until "$VIGIL" status "$2" | grep -q 'attempt 1  NODE_FAIL'; do
		_i=$((_i + 1))
		[ $_i -lt "$3" ] || fail "no NODE_FAIL after $3 s: $("$VIGIL" status "$2")"
		sleep 1
	done
	echo "NODE_FAIL recorded $(( $(date +%s) - _t0 )) s after the node died"
	"$harness/slurm-cluster-up" --node "$1" >/dev/null ||
		fail "cannot restart $1"
}

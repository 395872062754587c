# apptainer-lib.sh - sourced by the t05xx integration tests: brings up the
# real Apptainer (tests/harness/apptainer-up), makes a private temp dir and
# VIGIL_HOME, and defines small assertion helpers, and `vrun` for
# `vigil run` with the real apptainer.  Exits 77 with the reason when the
# Debian sid bootstrap itself failed (the only allowed skip).  Tests that
# need the backend driver (cases the CLI cannot express) call need_driver.
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIVER=$(dirname "$VIGIL")/tests/sing-driver
need_driver() {
	if [ ! -x "$DRIVER" ]; then
		echo "FAIL: $DRIVER is missing (make tests builds it)"
		exit 1
	fi
}
up=$("$top/tests/harness/apptainer-up")
rc=$?
if [ $rc -eq 77 ]; then
	echo "$up" | tail -n 1
	exit 77
fi
if [ $rc -ne 0 ]; then
	echo "FAIL: tests/harness/apptainer-up exited $rc"
	exit 1
fi
eval "$up"
tmp=$(mktemp -d /tmp/vigil-t05.XXXXXX)
VIGIL_HOME=$tmp/home
export VIGIL_HOME
unset VIGIL_SCRATCH SCRATCH SLURM_TMPDIR
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}

# expect ACTUAL EXPECTED WHAT
expect() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# drv ARGS... - runs the driver with the real apptainer and the test SIF
drv() {
	"$DRIVER" --binary "$APPTAINER_WRAP" --image "$BUSYBOX_SIF" "$@"
}

# drvx ARGS... - like drv, but replaces the shell: `(drvx ...) &` makes $!
# the driver itself, so signals sent to $! reach it
drvx() {
	exec "$DRIVER" --binary "$APPTAINER_WRAP" --image "$BUSYBOX_SIF" "$@"
}

# reap PID SECS - waits for the background PID at most SECS seconds; a
# hang is a failure (and the process group is killed)
reap() {
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt $(($2 * 10)) ]; then
			env kill -KILL -- "-$1" "$1" 2>/dev/null
			fail "process $1 still running after $2 s"
		fi
		sleep 0.1
	done
	wait "$1"
}

# mf NAME COMMAND [LINE...] - writes $tmp/NAME.yaml: the singularity
# backend with the real apptainer and the test SIF, COMMAND as the
# command (a YAML scalar or flow list, written as is), then each LINE
# (more top-level YAML); prints the path
mf() {
	_f=$tmp/$1.yaml
	_c=$2
	shift 2
	{
		echo "version: 1"
		echo "name: t05"
		echo "backend: singularity"
		echo "image: $BUSYBOX_SIF"
		echo "command: $_c"
		for _l in "$@"; do echo "$_l"; done
		if ! printf '%s\n' "$@" | grep -q '^singularity:'; then
			echo "singularity:"
			echo "  binary: $APPTAINER_WRAP"
		fi
	} >"$_f"
	echo "$_f"
}

# the interpreter itself, so that tests may narrow PATH around vrun/task
PY=$(python3 -c 'import sys; print(sys.executable)')

# vrun MANIFEST [OPTIONS...] - vigil run -q; stdout and stderr in
# $tmp/run.out and $tmp/run.err, the exit status in $vrc, the run id in
# $rid
vrun() {
	_m=$1
	shift
	"$VIGIL" run -q "$@" "$_m" >"$tmp/run.out" 2>"$tmp/run.err"
	vrc=$?
	rid=$("$VIGIL" status --json 2>/dev/null | "$PY" -c \
	    'import json,sys; r=json.load(sys.stdin)["runs"]; print(r[0]["id"] if r else "")')
}

# task IDX - "state exit signal reason" of task IDX of run $rid (exit -1
# when there is none)
task() {
	"$VIGIL" status "$rid" --json | "$PY" -c '
import json, sys
t = json.load(sys.stdin)["tasks"][int(sys.argv[1])]
print("%s %s %s %s" % (t["state"],
    -1 if t["exit_code"] is None else t["exit_code"], t["signal"] or 0,
    t["reason"] or ""))
' "$1"
}

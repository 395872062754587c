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

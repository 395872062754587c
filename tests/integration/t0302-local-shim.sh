#!/bin/sh
# t0302-local-shim: vigil starts every local task through vigil-shim,
# found next to the vigil binary, else in ../libexec/vigil beside it, else
# in $(PREFIX)/libexec/vigil.  Without it every task fails as a backend
# error naming the places (nothing
# starts), and `vigil doctor` says so; with it, the task's /proc shows
# only the task's PID namespace: $$ is 2 and pid 1 is vigil-shim, which
# is out of the task's reach (not dumpable: /proc/1/exe is unreadable).
set -u
fail() { echo "FAIL: $*"; exit 1; }
VIGIL_HOME=$(mktemp -d); export VIGIL_HOME
lone=$(mktemp -d)
trap 'rm -rf "$VIGIL_HOME" "$lone"' EXIT
dir=$(dirname "$(realpath "$VIGIL")")
libexec=$(strings "$VIGIL" | grep -m 1 '/libexec/vigil$') ||
	fail "no libexec directory in the binary"

cat >"$VIGIL_HOME/m.yaml" <<'YAML'
version: 1
name: shim
command: 'echo $$; readlink /proc/1/exe; set -- /proc/[0-9]*; echo $#'
YAML

# With the shim next to vigil.
doc=$("$VIGIL" doctor --backend local) || fail "doctor exited $?"
echo "$doc" | grep -qx "local: task launcher: ok ($dir/vigil-shim)" ||
	fail "doctor: $doc"
# A shim per task (VIGIL_NO_EXECUTOR=1): readlink has ended when the
# shell expands the glob itself: 1 (shim) and 2 (sh) are all the
# processes left.  readlink of /proc/1/exe prints nothing: the shim is
# not dumpable and the task has no CAP_SYS_PTRACE.
VIGIL_NO_EXECUTOR=1 "$VIGIL" run -q "$VIGIL_HOME/m.yaml" ||
	fail "run exited $?"
last_out() {
	"$VIGIL" logs "$(basename "$(ls -td "$VIGIL_HOME"/runs/* |
	    head -n 1)")/0"
}
out=$(last_out)
[ "$out" = "2
2" ] || fail "task saw: $out"
# The slot's executor (docs/isolation.md "Slot executors"): the same
# namespace of two processes; the executor, outside the task's Landlock
# domain where the kernel has Landlock, cannot be looked into from it.
sleep 1		# another run id
"$VIGIL" run -q "$VIGIL_HOME/m.yaml" || fail "run exited $?"
out=$(last_out)
[ "$out" = "2
2" ] || fail "task in an executor saw: $out"

# A copy of vigil alone in a directory, no shim installed.
cp "$VIGIL" "$lone/vigil"
if [ -x "$libexec/vigil-shim" ]; then
	"$lone/vigil" run -q "$VIGIL_HOME/m.yaml" ||
		fail "installed shim in $libexec not used"
	exit 0
fi
err=$("$lone/vigil" run "$VIGIL_HOME/m.yaml" 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "run without the shim succeeded"
want="cannot find the task launcher 'vigil-shim': tried '$lone/vigil-shim', '$(dirname "$lone")/libexec/vigil/vigil-shim' and '$libexec/vigil-shim' (build it with 'make', or install it with 'make install')"
# found missing by the backend's prepare: no task starts, each says why
echo "$err" | grep -qF "/0 [-] BACKEND_ERROR: $want" ||
	fail "error was: $err"
[ $rc -eq 1 ] || fail "run without the shim exited $rc, not 1"
doc=$("$lone/vigil" doctor --backend local)
echo "$doc" | grep -qxF "local: task launcher: missing (tried '$lone/vigil-shim', '$(dirname "$lone")/libexec/vigil/vigil-shim' and '$libexec/vigil-shim'; build it with 'make' or install it with 'make install')" ||
	fail "doctor without the shim: $doc"
echo "ok"

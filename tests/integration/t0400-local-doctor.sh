#!/bin/sh
# t0400-local-doctor: `vigil doctor` reports every kernel mechanism and
# the local backend's isolation levels, one line each, and the file
# system of the vigil binary and of VIGIL_HOME for Slurm; a bad --backend
# is a usage error.  The CI machine (Debian 12, root, Linux with Landlock)
# delivers every level in full.
set -u
fail() { echo "FAIL: $*"; exit 1; }
VIGIL_HOME=$(mktemp -d); export VIGIL_HOME
trap 'rm -rf "$VIGIL_HOME"' EXIT
BIN_FIX='task-exec on compute nodes needs a shared path; install vigil on a shared filesystem or set VIGIL_SLURM_VIGIL'
HOME_FIX='compute nodes write task results under it; set VIGIL_HOME to a directory on a shared filesystem'

out=$("$VIGIL" doctor) || fail "doctor exited $?"
echo "$out"
for re in '^kernel: Linux ' '^landlock: ok (ABI [0-9]' '^seccomp: ok$' \
    '^pid namespaces: ok$' '^network namespaces: ok$' '^cgroup: ' \
    '^local: tree kill: ok (PID namespace per task)$' \
    '^local: isolation none: ok$' '^local: isolation standard: ok$' \
    '^local: isolation strict: ok$'; do
	echo "$out" | grep -q "$re" || fail "no line matching '$re'"
done

# The binary the nodes would run is this one, by its real path.
self=$(realpath "$VIGIL")
line=$(echo "$out" | grep '^slurm: vigil binary ') ||
	fail "no 'slurm: vigil binary' line"
case $line in
"slurm: vigil binary on "*" ($self): shared") ;;
"slurm: vigil binary on "*" ($self): local — $BIN_FIX") ;;
*) fail "bad binary line: $line" ;;
esac
echo "$out" | grep -q "^slurm: VIGIL_HOME on [a-z0-9]* ($VIGIL_HOME): " ||
	fail "no 'slurm: VIGIL_HOME' line for $VIGIL_HOME"

# On a tmpfs (mounted in a private mount namespace) both are local; a
# VIGIL_HOME or binary that does not exist yet is judged by its parent.
d=$VIGIL_HOME/t
mkdir "$d"
out=$(VIGIL_HOME=$d/home/sub VIGIL_SLURM_VIGIL=$d/bin/vigil \
    unshare -m sh -c 'mount --make-rprivate / &&
    mount -t tmpfs none "$1" && exec "$2" doctor' sh "$d" "$VIGIL") ||
	fail "doctor on tmpfs: $?"
for want in \
    "slurm: vigil binary on tmpfs ($d/bin/vigil): local — $BIN_FIX" \
    "slurm: VIGIL_HOME on tmpfs ($d/home/sub): local — $HOME_FIX"; do
	echo "$out" | grep -qxF "$want" || fail "no line '$want' in: $out"
done

out=$("$VIGIL" doctor --backend local) || fail "doctor -b local: $?"
echo "$out" | grep -q '^docker:' && fail "--backend local printed docker"

err=$("$VIGIL" doctor --backend nope 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] || fail "bad backend: exit $rc, want 2"
[ "$(echo "$err" | head -n 1)" = "vigil: doctor: unknown backend 'nope' (try 'vigil version' for the list)" ] ||
	fail "bad backend message: $err"
exit 0

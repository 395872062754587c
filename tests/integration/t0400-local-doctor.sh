#!/bin/sh
# t0400-local-doctor: `vigil doctor` reports every kernel mechanism and
# the local backend's isolation levels, one line each; a bad --backend is
# a usage error.  The CI machine (Debian 12, root, Linux with Landlock)
# delivers every level in full.
set -u
fail() { echo "FAIL: $*"; exit 1; }
VIGIL_HOME=$(mktemp -d); export VIGIL_HOME
trap 'rm -rf "$VIGIL_HOME"' EXIT

out=$("$VIGIL" doctor) || fail "doctor exited $?"
echo "$out"
for re in '^kernel: Linux ' '^landlock: ok (ABI [0-9]' '^seccomp: ok$' \
    '^pid namespaces: ok$' '^network namespaces: ok$' '^cgroup: ' \
    '^local: tree kill: ok (PID namespace per task)$' \
    '^local: isolation none: ok$' '^local: isolation standard: ok$' \
    '^local: isolation strict: ok$'; do
	echo "$out" | grep -q "$re" || fail "no line matching '$re'"
done

out=$("$VIGIL" doctor --backend local) || fail "doctor -b local: $?"
echo "$out" | grep -q '^docker:' && fail "--backend local printed docker"

err=$("$VIGIL" doctor --backend nope 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] || fail "bad backend: exit $rc, want 2"
[ "$(echo "$err" | head -n 1)" = "vigil: doctor: unknown backend 'nope' (try 'vigil version' for the list)" ] ||
	fail "bad backend message: $err"
exit 0

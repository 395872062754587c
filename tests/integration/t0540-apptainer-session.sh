#!/bin/sh
# t0540-apptainer-session.sh - agent sessions on the singularity backend
# with the real apptainer: one instance per session (instance start,
# exec instance://NAME, instance stop); the checks of session-lib.sh,
# with "gone" meaning apptainer lists no instance of the session.
. "$(dirname "$0")/../harness/apptainer-lib.sh"
. "$(dirname "$0")/session-lib.sh"
trap 'sessions_down; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cat >"$tmp/app.yaml" <<EOF2
backend: singularity
image: $BUSYBOX_SIF
singularity:
  binary: $APPTAINER_WRAP
EOF2

sess_start() { "$VIGIL" session start -f "$tmp/app.yaml" "$@"; }
sb_gone() {
	! "$APPTAINER_WRAP" instance list 2>/dev/null | grep -q "vigil-$1"
}

session_suite

id=$(sess_start) || fail start
"$APPTAINER_WRAP" instance list 2>/dev/null | grep -q "vigil-$id" ||
    fail "no instance for the session"
out=$(x "$id" -- pwd)
[ "$out" = "$VIGIL_HOME/sessions/$id/work" ] || fail "first cwd: $out"
"$VIGIL" session stop "$id" >/dev/null
sb_gone "$id" || fail "instance left after stop"
echo "all passed"

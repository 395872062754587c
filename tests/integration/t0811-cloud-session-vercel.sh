#!/bin/sh
# t0811-cloud-session-vercel.sh - agent sessions on the vercel backend against
# tests/harness/fake-vercel.py: one sandbox per session, each command the
# provider's exec call running the session wrapper; the checks of
# session-lib.sh, with "gone" meaning the API lists no sandbox owned by
# the session.
PROVIDER=vercel
. "$(dirname "$0")/cloud-lib.sh"
. "$(dirname "$0")/session-lib.sh"
trap 'sessions_down; stop_fake; rm -rf "$W"' EXIT
cd "$W" || exit 1
start_fake
cat >"$W/s.yaml" <<EOF2
backend: vercel
image: debian:12
vercel:
  endpoint: $EP
EOF2

sess_start() { "$VIGIL" session start -f "$W/s.yaml" "$@"; }
sb_gone() { ! boxes | grep -q " session:$1 "; }

session_suite
id=$(sess_start) || fail start
boxes | grep -q " session:$id " || fail "no sandbox labelled for the session"
"$VIGIL" session stop "$id" >/dev/null
sb_gone "$id" || fail "sandbox left after stop"
echo "all passed"

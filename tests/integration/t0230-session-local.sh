#!/bin/sh
# t0230-session-local.sh - agent sessions on the local backend: the cwd
# and exports persist, output streams, stdin, timeouts kill the tree and
# not the session, background jobs, denials leave the session as it was,
# idle and max-age expiry by the keeper, stop, gc after SIGKILL of the
# keeper, a runner and a foreground vigil, two agents at once
# (session-lib.sh).  Every process of a session carries its directory in
# its command line (the wrapper's), so "gone" means pgrep finds none.
set -u
VIGIL=${VIGIL:?}
tmp=$(mktemp -d)
trap 'sessions_down; rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
cd "$tmp" || exit 1
. "$(dirname "$0")/session-lib.sh"

sess_start() { "$VIGIL" session start "$@"; }
sb_gone() {
	! pgrep -f "$VIGIL_HOME/sessions/$1" >/dev/null &&
	    ! pgrep -f 'sleep 301[78]' >/dev/null
}

session_suite

# Local specifics: the first directory is the session's work directory,
# and the command runs confined like a task (no writes outside it).
id=$(sess_start) || fail start
out=$(x "$id" -- pwd)
[ "$out" = "$VIGIL_HOME/sessions/$id/work" ] || fail "first cwd: $out"
x "$id" -- "touch $tmp/outside" 2>/dev/null
[ -e "$tmp/outside" ] && fail "a session command wrote outside its directory"
# The timed-out tree is gone on the host too.
x "$id" --timeout 1 -- 'sleep 62 & sleep 63' 2>/dev/null
sleep 0.3
pgrep -f 'sleep 6[23]' >/dev/null && fail "timed-out tree left on the host"
"$VIGIL" session stop "$id" >/dev/null

# The example agent loop runs as documented and leaves nothing open.
top=$(cd "$(dirname "$0")/../.." && pwd)
VIGIL=$VIGIL sh "$top/examples/sessions/agent-loop.sh" >ex.txt 2>ex.err ||
    fail "example: $(cat ex.err)"
grep -q '"stdout":"hello from .*/work/project\\n"' ex.txt || fail "example cwd/env: $(cat ex.txt)"
grep -q '"denied":true' ex.txt || fail "example denial"
grep -q '^tick 3$' ex.txt || fail "example background job"
[ -z "$(sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
    "select id from sessions where ended = 0")" ] || fail "example left a session open"
echo "all passed"

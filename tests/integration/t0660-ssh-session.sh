#!/bin/sh
# t0660-ssh-session.sh - agent sessions on the ssh backend through the
# loopback sshd: a remote session directory (<remote_dir>/<id>), each
# command one exec channel running the session wrapper; the checks of
# session-lib.sh, with "gone" meaning the remote directory is removed and
# none of the session's processes runs.
. "$(dirname "$0")/ssh-lib.sh"
cleanup_extra=sessions_down
. "$here/session-lib.sh"
cd "$tmp" || exit 1
manifest "$tmp/ssh.yaml"

sess_start() { "$VIGIL" session start -f "$tmp/ssh.yaml" "$@"; }
sb_gone() {
	[ ! -d "$tmp/remote/$1" ] && ! pgrep -f "$tmp/remote/$1" >/dev/null
}

session_suite

id=$(sess_start) || fail start
out=$(x "$id" -- pwd)
[ "$out" = "$tmp/remote/$id/work" ] || fail "first cwd: $out"
# Each command connects anew: the state lives in the remote directory.
x "$id" -- 'export KEPT=yes' || fail "export"
[ "$(x "$id" -- 'echo $KEPT')" = yes ] || fail "kept across connections"
"$VIGIL" session stop "$id" >/dev/null
sb_gone "$id" || fail "remote dir left"
[ $fail -eq 0 ] || exit 1
echo "all passed"

#!/bin/sh
# s0304: a session command (vigil exec --session) tries the host's
# engine socket and an abstract socket; a session command is confined as
# a task is, so neither listener may see a connection.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/sock-lib.sh"
run=$(mktemp -d /run/vigil-sec-XXXXXX)
sock_dirs=$run
listen "$run/docker.sock" "$tmp/log1"
listen "@vigil-$sec_name-$$" "$tmp/log2"
id=$("$VIGIL" session start) || fail "session start"
sock_cleanup0() { "$VIGIL" session stop "$id" >/dev/null 2>&1; sock_cleanup; }
trap 'sock_cleanup0' EXIT
out=$("$VIGIL" exec --session "$id" -- "$(connect_cmd "$run/docker.sock")" 2>&1)
case $out in refused*) ;; *) fail "session command reached the engine socket: '$out'" ;; esac
out=$("$VIGIL" exec --session "$id" -- "$(connect_cmd "@vigil-$sec_name-$$")" 2>&1)
case $out in refused*) ;; *) fail "session command reached the abstract socket: '$out'" ;; esac
expect "$(saw "$tmp/log1")$(saw "$tmp/log2")" "" "connections the host saw"
echo "ok: session commands reach no host socket"

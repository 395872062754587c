#!/bin/sh
# s0303: a task connects to an abstract Unix socket of the host
# ("@name", as X11, D-Bus and many daemons use).  At standard Landlock's
# abstract-socket scope refuses it, at strict the task's network
# namespace has no such socket; the listener must see nothing.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/sock-lib.sh"
name="@vigil-$sec_name-$$"
listen "$name" "$tmp/log"
for level in standard strict; do
	job "$tmp/j.yaml" "$level" "$(connect_cmd "$name")"
	"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1
	out=$(cat "$VIGIL_HOME"/runs/*/tasks/0/stdout 2>/dev/null | tail -1)
	rm -rf "$VIGIL_HOME"
	case $out in
	refused*) ;;
	*) fail "$level task reached $name: '$out' ($(cat "$tmp/out"))" ;;
	esac
done
expect "$(saw "$tmp/log")" "" "connections the abstract socket saw"
echo "ok: abstract sockets of the host out of reach"

#!/bin/sh
# s0302: at strict no pathname socket of the host is reachable, whatever
# its name (here a root listener at $tmp/srv/d.sock, named like nothing
# known).  The same socket at standard is reachable (it is no control
# socket), which shows the attack itself works; a socket the task binds
# in its own directory stays usable at strict.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/sock-lib.sh"
mkdir -p "$tmp/srv"
listen "$tmp/srv/d.sock" "$tmp/log"
result() {
	"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1
	cat "$VIGIL_HOME"/runs/*/tasks/0/stdout 2>/dev/null | tail -1
	rm -rf "$VIGIL_HOME"
}
job "$tmp/j.yaml" standard "$(connect_cmd "$tmp/srv/d.sock")"
expect "$(result)" "connected" "standard task to a plain socket"
expect "$(saw "$tmp/log")" "connection" "the listener saw the standard task"
: >"$tmp/log"
job "$tmp/j.yaml" strict "$(connect_cmd "$tmp/srv/d.sock")" \
    "  readable: [$tmp]"
out=$(result)
case $out in refused*) ;; *) fail "strict task reached $tmp/srv/d.sock: '$out' ($(cat "$tmp/out"))" ;; esac
expect "$(saw "$tmp/log")" "" "connections the host socket saw from strict"
# Its own socket, in its own directory, works.
job "$tmp/j.yaml" strict "cd \"\$VIGIL_TASK_DIR\" && python3 -c 'import socket
p=\"own.sock\"
l=socket.socket(socket.AF_UNIX); l.bind(p); l.listen(1)
c=socket.socket(socket.AF_UNIX); c.connect(p); print(\"connected\")'"
expect "$(result)" "connected" "strict task to its own socket"
echo "ok: strict hides every host socket, not the task's own"

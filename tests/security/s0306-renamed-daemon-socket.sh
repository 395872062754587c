#!/bin/sh
# s0306: a root container engine listens at a path that says nothing
# ($tmp/srv/x/d.sock, as a dockerd started with -H unix:///srv/x/d.sock):
# at standard vigil finds it by the daemon holding it (its process name)
# and hides it; the listener must see no connection.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/sock-lib.sh"
mkdir -p "$tmp/srv/x"
listen "$tmp/srv/x/d.sock" "$tmp/log" dockerd
expect "$(cat /proc/$(echo $listeners | awk '{print $NF}')/comm)" dockerd \
    "the listener's process name"
job "$tmp/j.yaml" standard "$(connect_cmd "$tmp/srv/x/d.sock")"
"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1
out=$(cat "$VIGIL_HOME"/runs/*/tasks/0/stdout 2>/dev/null | tail -1)
case $out in
refused*) ;;
*) fail "standard task reached a dockerd's socket at $tmp/srv/x/d.sock: '$out' ($(cat "$tmp/out"))" ;;
esac
expect "$(saw "$tmp/log")" "" "connections the daemon's socket saw"
echo "ok: a control daemon's socket is hidden wherever it is bound"

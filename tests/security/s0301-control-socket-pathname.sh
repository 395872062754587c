#!/bin/sh
# s0301: a task connects to a container engine's control socket on the
# host (root on the host): one under /run, one moved to an odd place
# (/srv-like), one rootless in a home directory.  At standard and strict
# the listener must see no connection: vigil covers them in the task's
# mount namespace.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/sock-lib.sh"
run=$(mktemp -d /run/vigil-sec-XXXXXX)
sock_dirs=$run
mkdir -p "$tmp/srv/x" "$tmp/home/u/.docker/run"
listen "$run/docker.sock" "$tmp/log1"
listen "$tmp/srv/x/containerd.sock" "$tmp/log2"
listen "$tmp/home/u/.docker/run/docker.sock" "$tmp/log3"
for level in standard strict; do
	for s in "$run/docker.sock" "$tmp/srv/x/containerd.sock" \
	    "$tmp/home/u/.docker/run/docker.sock"; do
		job "$tmp/j.yaml" "$level" "$(connect_cmd "$s")" \
		    "  readable: [$tmp]"
		"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1
		out=$(cat "$VIGIL_HOME"/runs/*/tasks/0/stdout 2>/dev/null |
		    tail -1)
		rm -rf "$VIGIL_HOME"
		case $out in
		refused*) ;;
		*) fail "$level task reached $s: '$out' ($(cat "$tmp/out"))" ;;
		esac
	done
done
expect "$(saw "$tmp/log1")$(saw "$tmp/log2")$(saw "$tmp/log3")" "" \
    "connections the host's engine sockets saw"
echo "ok: engine sockets hidden at standard and strict"

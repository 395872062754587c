#!/bin/sh
# A root task opens a raw packet socket (AF_PACKET, CAP_NET_RAW) on the
# host's network (standard keeps it), from which it could read and forge
# every frame of the host's interfaces.  Refused at standard (and at
# strict, whose network is its own anyway).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
cat >"$tmp/a.py" <<'P'
import socket
for fam, typ in ((socket.AF_PACKET, socket.SOCK_RAW),
                 (socket.AF_INET, socket.SOCK_RAW)):
    try:
        s = socket.socket(fam, typ, 0x0300 if fam == socket.AF_PACKET
                          else socket.IPPROTO_ICMP)
        print("opened", fam)
    except OSError as e:
        print("refused", fam, e.errno)
P
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "  readable: [$tmp]"
	out=$(task_out)
	case "$out" in *opened*|'') fail "$level: raw socket: '$out'" ;; esac
done
echo "ok: no raw socket"

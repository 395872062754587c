#!/bin/sh
# A root task watches the host's file systems with fanotify (CAP_SYS_ADMIN):
# every open of every process on the mount, and with permission events
# the power to block them.  Refused at standard and strict.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
cat >"$tmp/a.py" <<'P'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.fanotify_init(0, 0)  # FAN_CLASS_NOTIF
if fd >= 0:
    # FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, on /
    r = libc.fanotify_mark(fd, 0x1 | 0x10, ctypes.c_uint64(0x20), -100, b"/")
    print("watching", fd, r)
else:
    print("refused", ctypes.get_errno())
P
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "  readable: [$tmp]"
	out=$(task_out)
	case "$out" in refused*) ;; *) fail "$level: fanotify: '$out'" ;; esac
done
echo "ok: no fanotify"

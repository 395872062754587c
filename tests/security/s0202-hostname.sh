#!/bin/sh
# A root task sets the host name (sethostname(2), as hostname(1) would):
# with CAP_SYS_ADMIN and no UTS namespace of its own it renames the host.
# At standard and strict the host's name stays.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
host=$(hostname)
trap 'hostname "$host"; sec_cleanup' EXIT
cat >"$tmp/a.py" <<'P'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("set", libc.sethostname(b"vigil-pwned", 11), ctypes.get_errno())
P
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "  readable: [$tmp]"
	expect "$(hostname)" "$host" "$level: host name ($(task_out))"
done
echo "ok: host name kept"

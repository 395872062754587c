#!/bin/sh
# A root task uses the kernel log with CAP_SYSLOG: sets the console log
# level of the host (syslog(2) SYSLOG_ACTION_CONSOLE_LEVEL, seen in
# /proc/sys/kernel/printk) and reads the log despite dmesg_restrict.  At
# standard and strict the level stays and the log is not read.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
printk=$(cat /proc/sys/kernel/printk)
trap 'echo "$printk" >/proc/sys/kernel/printk; sec_cleanup' EXIT
cat >"$tmp/a.py" <<'P'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.klogctl(8, None, 2)        # SYSLOG_ACTION_CONSOLE_LEVEL
print("level", r, ctypes.get_errno())
buf = ctypes.create_string_buffer(4096)
r = libc.klogctl(3, buf, 4096)      # SYSLOG_ACTION_READ_ALL
print("read", r, ctypes.get_errno())
P
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "  readable: [$tmp]"
	out=$(task_out)
	expect "$(cat /proc/sys/kernel/printk)" "$printk" \
	    "$level: console level ($out)"
	[ "$(cat /proc/sys/kernel/dmesg_restrict)" = 1 ] || continue
	case "$out" in *"read -1 1"*) ;; *)
		fail "$level: the kernel log was read: $out" ;; esac
done
echo "ok: kernel log untouched"

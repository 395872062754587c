#!/bin/sh
# A root task removes the host's SysV IPC objects (a message queue made
# by ipcmk, found in /proc/sysvipc or by id) and POSIX shared memory (the
# files in /dev/shm): with no IPC namespace of its own and root's
# CAP_IPC_OWNER they are the host's.  They survive at standard and strict.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
command -v ipcmk >/dev/null || skip "no ipcmk (util-linux) to make a host queue"
qid=$(ipcmk -Q | sed -n 's/.*: *//p')
[ -n "$qid" ] || fail "ipcmk made no queue"
shm=/dev/shm/vigil-s0203-$$
echo host >"$shm"
trap 'ipcrm -q "$qid" 2>/dev/null; rm -f "$shm"; sec_cleanup' EXIT
cat >"$tmp/a.py" <<P
import ctypes, os, glob
libc = ctypes.CDLL(None, use_errno=True)
ids = [int(l.split()[1]) for l in open("/proc/sysvipc/msg").readlines()[1:]]
for i in set(ids + [$qid]):
    print("rmid", i, libc.msgctl(i, 0, None), ctypes.get_errno())
for f in glob.glob("/dev/shm/*"):
    try: os.unlink(f); print("unlinked", f)
    except OSError as e: print("kept", f, e.errno)
P
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "  readable: [$tmp]"
	awk 'NR > 1 { print $2 }' /proc/sysvipc/msg | grep -qx "$qid" ||
	    fail "$level: the host's message queue $qid was removed: $(task_out)"
	[ -f "$shm" ] || fail "$level: $shm removed: $(task_out)"
done
echo "ok: host IPC objects and /dev/shm kept"

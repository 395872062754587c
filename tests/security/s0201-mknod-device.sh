#!/bin/sh
# A root task makes a device node in its own task directory (the memory
# device, a block device) and opens it: with root's CAP_MKNOD and a
# Landlock MAKE_CHAR/MAKE_BLOCK right on the task directory it could
# read any device of the host.  At standard and strict no node is made.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
cat >"$tmp/a.py" <<'P'
import os, stat
d = os.environ["VIGIL_TASK_DIR"]
for name, kind, dev in (("c", stat.S_IFCHR, os.makedev(1, 3)),
                        ("b", stat.S_IFBLK, os.makedev(7, 0))):
    try:
        os.mknod(os.path.join(d, name), 0o600 | kind, dev)
        os.close(os.open(os.path.join(d, name), os.O_RDONLY))
        print("made", name)
    except OSError as e:
        print("refused", name, e.errno)
P
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "  readable: [$tmp]"
	out=$(task_out)
	case "$out" in *made*) fail "$level: a device node was made: $out" ;; esac
	expect "$(echo "$out" | grep -c refused)" 2 "$level: both refused"
	for n in c b; do
		f=$VIGIL_HOME/runs/$rid/tasks/0/$n
		{ [ -c "$f" ] || [ -b "$f" ]; } &&
		    fail "$level: device node $f left on the host"
	done
done
echo "ok: no device node made at standard or strict"

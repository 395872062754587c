#!/bin/sh
# A task goes for its supervisor, pid 1 of its PID namespace: ptrace,
# pidfd_getfd of its descriptors, /proc/1/mem, /proc/1/fd, process_vm_readv.
# With root's CAP_SYS_PTRACE and a shim in its own Landlock domain it
# could take the shim's report channel or rewrite its memory.  Refused at
# every level: none, standard and strict with a shim of the task's own
# (VIGIL_NO_EXECUTOR=1), standard in a slot's executor.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
build_attack sup-attack.c sup-attack
for run in "none 1" "standard 1" "strict 1" "standard 0"; do
	set -- $run
	VIGIL_NO_EXECUTOR=$2 task_run "$1" "$tmp/sup-attack probe" \
	    "  readable: [$tmp]"
	out=$(task_out)
	case "$out" in *REACHED*) fail "$run: the supervisor was reached: $out" ;; esac
	expect "$(task_field exit_code)" 3 "$run: the task ran ($out)"
done
echo "ok: the supervisor is out of the task's reach"

#!/bin/sh
# A task leaves a process behind that stops its supervisor (ptrace
# attach, SIGSTOP, SIGTSTP to pid 1) and exits 4: a stopped shim never
# reaps the task nor reports, and the run (or vigil exec) hangs.  Each
# must end promptly with the task's true status.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
build_attack sup-attack.c sup-attack
for run in "none 1" "standard 1" "strict 1" "standard 0"; do
	set -- $run
	t0=$(date +%s)
	VIGIL_NO_EXECUTOR=$2 task_run "$1" "$tmp/sup-attack stop" \
	    "  readable: [$tmp]
limits:
  cpu_time: 100"
	t1=$(date +%s)
	[ $((t1 - t0)) -lt 20 ] || fail "$run: the run took $((t1 - t0)) s"
	expect "$(task_field state)/$(task_field exit_code)" FAILED/4 \
	    "$run: recorded status"
done
sid=$("$VIGIL" session start) || fail "session start"
trap '"$VIGIL" session stop "$sid" >/dev/null 2>&1; pkill -f "$tmp/sup-attack"; sec_cleanup' EXIT
timeout 20 "$VIGIL" exec --session "$sid" -- "$tmp/sup-attack stop" </dev/null
expect "$?" 4 "vigil exec's status (124: it hung)"
echo "ok: the supervisor cannot be stopped"

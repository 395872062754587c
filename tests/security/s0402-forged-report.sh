#!/bin/sh
# A failing task forges its own report: it takes the shim's report
# channel (pidfd_getfd on pid 1) and sends "the task ran, wait status 0"
# before exiting 3.  vigil must record FAILED with exit 3, at none,
# standard and strict, and for a session command (vigil exec's status).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
build_attack sup-attack.c sup-attack
for level in none standard strict; do
	VIGIL_NO_EXECUTOR=1 task_run "$level" "$tmp/sup-attack forge" \
	    "  readable: [$tmp]"
	expect "$(task_field state)/$(task_field exit_code)" FAILED/3 \
	    "$level: recorded status ($(task_out))"
done
sid=$("$VIGIL" session start) || fail "session start"
trap '"$VIGIL" session stop "$sid" >/dev/null 2>&1; sec_cleanup' EXIT
timeout 60 "$VIGIL" exec --session "$sid" -- "$tmp/sup-attack forge" </dev/null
expect "$?" 3 "session command's status"
echo "ok: the recorded status is the task's own"

#!/bin/sh
# Docker backend: the timeout stops the container (SIGTERM, then SIGKILL
# after the grace period when SIGTERM is ignored), SIGTERM to the process
# running the attempt cancels it, and both leave no container behind.
. "$(dirname "$0")/docker-lib.sh"
T=$tmp/task

# PID 1 of a container ignores SIGTERM unless it handles it: trap it.
start=$(date +%s)
out=$("$DA" --task-dir "$T" --timeout 1 --grace 5 run -c \
	'trap "echo got TERM; exit 3" TERM; echo started; sleep 30 & wait')
secs=$(( $(date +%s) - start ))
check "timeout, SIGTERM honoured" "$(echo "$out" | sed 's/after [0-9.]* s/after N s/')" \
	"state=TIMEOUT exit=-1 signal=15 reason=timed out after N s; container \
stopped with SIGTERM"
check "output before the stop kept" "$(cat "$T/stdout")" "started
got TERM"
[ $secs -lt 5 ] && echo "ok: stopped in ${secs}s" ||
	{ echo "FAIL: took ${secs}s"; fail=1; }

start=$(date +%s)
out=$("$DA" --task-dir "$T" --timeout 1 --grace 1 run -c \
	'trap "" TERM; echo started; sleep 30')
secs=$(( $(date +%s) - start ))
check "timeout, SIGTERM ignored" "$(echo "$out" | sed 's/after [0-9.]* s/after N s/')" \
	"state=TIMEOUT exit=-1 signal=9 reason=timed out after N s; container \
stopped with SIGKILL"
[ $secs -lt 6 ] && echo "ok: killed in ${secs}s" ||
	{ echo "FAIL: took ${secs}s"; fail=1; }

# A task that ends before its timeout is not touched.
out=$("$DA" --task-dir "$T" --timeout 20 run -c 'sleep 0.2; exit 2')
check "inside the timeout" "$out" "state=FAILED exit=2 signal=0 reason=exit code 2"

# Cancel: SIGTERM to the process that runs the attempt.
"$DA" --task-dir "$T" --run-id cancel1 --grace 1 run -c 'echo up; sleep 60' \
	>"$tmp/cancel.out" 2>&1 &
pid=$!
cleanup_extra="kill $pid 2>/dev/null"
i=0
until grep -q up "$T/stdout" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || break; sleep 0.1
done
kill -TERM $pid
wait $pid
check "cancel exit status" "$?" "0"
check "cancelled" "$(sed 's/after [0-9.]* s/after N s/' "$tmp/cancel.out")" \
	"state=CANCELLED exit=-1 signal=9 reason=cancelled after N s; container \
stopped with SIGKILL"
check "no container left" "$(vigil_containers)" ""
exit $fail

#!/bin/sh
# ssh: the timeout holds on both sides and cancel kills the remote
# process group.  Each task records its shell's pid and a background
# sleep's pid (same process group) so the test can see that the whole
# remote group is gone.
. "$(dirname "$0")/ssh-lib.sh"

# Waits until file $1 exists.
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 600 ]; do
		sleep 0.05; i=$((i + 1))
	done
}

# Succeeds when none of the pids in file $1 is alive.
all_gone() {
	for p in $(cat "$1"); do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}

# Waits up to $2 seconds for all_gone $1.
wait_gone() {
	i=0
	while ! all_gone "$1" && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1; i=$((i + 1))
	done
	all_gone "$1" && echo gone || echo "still running: $(cat "$1")"
}

# Whatever a failure leaves running is killed on exit.
cleanup_extra='for f in "$tmp"/p1 "$tmp"/p2 "$tmp"/p3; do
	[ -f "$f" ] && kill -9 $(cat "$f") 2>/dev/null; done'
task='echo start; sleep 300 & echo "$$ $!" >PIDS.tmp; mv PIDS.tmp PIDS; wait'

# 1. Timeout with vigil connected: TIMEOUT, the group is killed.  The
# scheduler gives the monitor kill_grace to stop the remote task and
# fetch the rest of the output.
manifest "$tmp/to.yaml" "command: $(echo "$task" | sed "s#PIDS#$tmp/p1#g")" \
	'timeout: 3s' 'kill_grace: 5s'
start=$(date +%s)
vrun "$tmp/to.yaml"
took=$(( $(date +%s) - start ))
check "timeout: vigil exit status" "$rc" 1
check "timeout: task" "$(task_line)" \
	"TIMEOUT exit=None signal=15 reason=timed out after 3s"
check "timeout: output before the kill kept" "$(cat "$(task_dir)/stdout")" \
	"start"
check "timeout: remote process group killed" "$(wait_gone "$tmp/p1" 5)" gone
check "timeout: ended within seconds ($took s)" \
	"$([ $took -lt 25 ] && echo yes)" yes

# 2. The remote half alone: the monitor is frozen (SIGSTOP) right after
# the start, so only the remote watchdog can stop the task.
manifest "$tmp/to2.yaml" "command: $(echo "$task" | sed "s#PIDS#$tmp/p2#g")" \
	'timeout: 3s' 'kill_grace: 1s'
"$VIGIL" run -q "$tmp/to2.yaml" >"$tmp/run.out" 2>"$tmp/run.err" &
vpid=$!
wait_file "$tmp/p2"
for p in $(ps -o pid= --ppid "$vpid"); do
	kill -STOP "$p"
done
check "watchdog: remote group killed while vigil is frozen" \
	"$(wait_gone "$tmp/p2" 10)" gone
wait "$vpid"
# The monitor itself was killed (SIGKILL after kill_grace) while frozen.
check "watchdog: task" "$(task_line)" \
	"TIMEOUT exit=None signal=9 reason=timed out after 3s"

# 3. Cancel (^C to vigil run): CANCELLED, the remote group is killed,
# the output so far is kept.
manifest "$tmp/cancel.yaml" \
	"command: $(echo "$task" | sed "s#PIDS#$tmp/p3#g")"
"$VIGIL" run -q "$tmp/cancel.yaml" >"$tmp/run.out" 2>"$tmp/run.err" &
vpid=$!
wait_file "$tmp/p3"
sleep 0.5
kill -INT "$vpid"
wait "$vpid"
rc=$?
check "cancel: vigil exit status" "$rc" 5
check "cancel: task" "$(task_line)" \
	"CANCELLED exit=None signal=15 reason=cancelled"
check "cancel: output kept" "$(cat "$(task_dir)/stdout")" "start"
check "cancel: remote process group killed" "$(wait_gone "$tmp/p3" 5)" gone
exit $fail

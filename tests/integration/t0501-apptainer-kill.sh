#!/bin/sh
# Timeout and cancel end the container's whole process tree: the task,
# a background child it started, and apptainer's own processes.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
need_driver
mkdir -p "$tmp/t"

# Processes whose command line is the marker (unique to this run).
alive() {
	ps -eo args | grep -cx "$1" || true
}

m1="sleep 4$$1"
start=$(date +%s)
r=$(drv --timeout 1.5 --grace 2 "$tmp/t" -c \
    "$m1 & $m1 ; echo never")
secs=$(( $(date +%s) - start ))
expect "$r" "state=TIMEOUT exit=-1 signal=15 reason=timed out after 1.5 s" "timeout"
[ "$secs" -le 5 ] || fail "timeout took ${secs}s"
sleep 0.5
expect "$(alive "$m1")" "0" "processes left after timeout"
grep -q never "$tmp/t/stdout" && fail "the task went on after the timeout"

# A task that ignores SIGTERM is killed after the grace period.
m2="sleep 4$$2"
r=$(drv --timeout 1 --grace 1 "$tmp/t" -c \
    "trap '' TERM; $m2 & $m2")
# The starter either waits for the container (then SIGKILL after the
# grace: signal=9) or exits at once on SIGTERM (signal=15, and the group
# kill that follows takes the rest): what matters is that nothing is left.
case "$r" in
"state=TIMEOUT exit=-1 signal=9 reason=timed out after 1 s"|\
"state=TIMEOUT exit=-1 signal=15 reason=timed out after 1 s") ;;
*) fail "timeout after grace: $r" ;;
esac
sleep 0.5
expect "$(alive "$m2")" "0" "processes left after SIGKILL"

# Cancel: SIGTERM to the waiting driver (as `vigil cancel` does).
m3="sleep 4$$3"
(drvx "$tmp/t" -c "$m3 & $m3" >"$tmp/r3") &
dpid=$!
i=0
until [ "$(alive "$m3")" -ge 2 ] || [ $i -gt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
expect "$(alive "$m3")" "2" "task running before cancel"
kill -TERM $dpid
reap $dpid 15
expect "$(cat "$tmp/r3")" "state=CANCELLED exit=-1 signal=15 reason=cancelled" "cancel"
sleep 0.5
expect "$(alive "$m3")" "0" "processes left after cancel"

# start/finish as a scheduler drives it: a group kill from outside.
m4="sleep 4$$4"
(drvx --mode start "$tmp/t" -c "$m4 & $m4" >"$tmp/r4") &
dpid=$!
i=0
until grep -q pid= "$tmp/r4" 2>/dev/null && [ "$(alive "$m4")" -ge 2 ] ||
    [ $i -gt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
pid=$(sed -n 's/^pid=//p' "$tmp/r4")
env kill -KILL -- "-$pid"
reap $dpid 15
expect "$(tail -n 1 "$tmp/r4")" "state=FAILED exit=-1 signal=9 reason=killed by signal 9" "group SIGKILL"
sleep 0.5
expect "$(alive "$m4")" "0" "processes left after group SIGKILL"
echo "t0501: ok"

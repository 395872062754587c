#!/bin/sh
# Timeout and cancel through `vigil run` end the container's whole process
# tree: the task, a background child it started (even in a session of its
# own), and apptainer's own processes; nothing is left running.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"

# Processes whose command line is the marker (unique to this run).
alive() {
	ps -eo args | grep -cx "$1" || true
}
# Processes of apptainer working on this test's task directories.
starters() {
	ps -eo args | grep -c "^[S]tarter\|^[a]pptainer.*$tmp" || true
}

# timeout: TIMEOUT with the signal vigil sent, bounded, nothing left
m1="sleep 4$$1"
m=$(mf to "'setsid $m1 & $m1; echo never'" "timeout: 1.5" "kill_grace: 2")
start=$(date +%s)
vrun "$m"
secs=$(( $(date +%s) - start ))
expect "$vrc" "1" "exit status of a timed-out run ($(cat "$tmp/run.err"))"
case "$(task 0)" in
"TIMEOUT -1 15 timed out after 1.5s") ;;
*) fail "timeout: $(task 0)" ;;
esac
[ "$secs" -le 6 ] || fail "timeout took ${secs}s"
sleep 0.5
expect "$(alive "$m1")" "0" "processes left after timeout"
expect "$(starters)" "0" "apptainer processes left after timeout"
"$VIGIL" logs "$rid/0" | grep -q never && fail "the task went on after the timeout"

# a task that ignores SIGTERM is killed after the grace period
m2="sleep 4$$2"
m=$(mf term "'trap \"\" TERM; $m2 & $m2'" "timeout: 1" "kill_grace: 1")
vrun "$m"
expect "$vrc" "1" "exit status after the grace"
expect "$(task 0 | cut -d' ' -f1)" "TIMEOUT" "state after the grace"
sleep 0.5
expect "$(alive "$m2")" "0" "processes left after SIGKILL"
expect "$(starters)" "0" "apptainer processes left after SIGKILL"

# vigil cancel RUN: CANCELLED, nothing left
m3="sleep 4$$3"
m=$(mf can "'$m3 & $m3'")
"$VIGIL" run -q "$m" >"$tmp/can.out" 2>&1 &
vpid=$!
i=0
until [ "$(alive "$m3")" -ge 2 ] || [ $i -gt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
expect "$(alive "$m3")" "2" "task running before cancel"
rid=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" cancel "$rid" >/dev/null 2>&1 || fail "vigil cancel exited $?"
reap $vpid 20
expect "$(task 0 | cut -d' ' -f1,4-)" "CANCELLED cancelled" "cancel"
sleep 0.5
expect "$(alive "$m3")" "0" "processes left after cancel"
expect "$(starters)" "0" "apptainer processes left after cancel"

# SIGINT to the foreground vigil (^C) cancels the same way
m4="sleep 4$$4"
m=$(mf int "'$m4 & $m4'")
"$VIGIL" run -q "$m" >"$tmp/int.out" 2>&1 &
vpid=$!
i=0
until [ "$(alive "$m4")" -ge 2 ] || [ $i -gt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
kill -INT $vpid
reap $vpid 20
rid=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
expect "$(task 0 | cut -d' ' -f1)" "CANCELLED" "SIGINT"
sleep 0.5
expect "$(alive "$m4")" "0" "processes left after SIGINT"

# SIGKILL of the watched process from outside, as a scheduler's last
# resort would send it: the backend driver, since no vigil command sends
# a raw SIGKILL to an attempt's process.
need_driver
mkdir -p "$tmp/t"
m5="sleep 4$$5"
(drvx --mode start "$tmp/t" -c "$m5 & $m5" >"$tmp/r5") &
dpid=$!
i=0
until grep -q pid= "$tmp/r5" 2>/dev/null && [ "$(alive "$m5")" -ge 2 ] ||
    [ $i -gt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
pid=$(sed -n 's/^pid=//p' "$tmp/r5")
kill -KILL "$pid"
reap $dpid 15
expect "$(tail -n 1 "$tmp/r5")" "state=FAILED exit=-1 signal=9 reason=killed by signal 9" "SIGKILL"
sleep 0.5
expect "$(alive "$m5")" "0" "processes left after SIGKILL of the shim"
echo "t0501: ok"

#!/bin/sh
# A slot's next task held by the slot's executor (schedulers/direct.c,
# "Ahead"; backends/shim.h): with --jobs 1 tasks still run one at a time,
# in order, each RUNNING before it ends; a held task cancelled before it
# starts never runs; the held task of a vigil killed with SIGKILL never
# starts, and resume runs it once.
set -u
. "$(dirname "$0")/engine-lib.sh"

last() { "$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'; }
states() { jq_run "$1" '" ".join(t["state"] for t in d["tasks"])'; }
state_of() { jq_run "$1" "d['tasks'][$2]['state']"; }
wait_state() {	# run task state
	i=0
	while [ $i -lt 150 ]; do
		[ "$(state_of "$1" "$2" 2>/dev/null)" = "$3" ] && return 0
		sleep 0.1; i=$((i + 1))
	done
	fail "task $2 of $1 never $3 (now $(state_of "$1" "$2"))"
}

new_run() {	# the newest run once it is not $1
	i=0
	while [ $i -lt 150 ]; do
		n=$(last 2>/dev/null) && [ -n "$n" ] && [ "$n" != "$1" ] &&
		    { echo "$n"; return 0; }
		sleep 0.1; i=$((i + 1))
	done
	fail "no new run after $1"
}

# 1. One at a time and in order: each task's start (its own clock) comes
# after the end of the one before it.
cat >"$W/seq.yaml" <<'Y'
version: 1
name: held-seq
matrix:
  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
command: echo "start $(date +%s%N)"; sleep 0.02; echo "end $(date +%s%N)"
Y
"$VIGIL" run -q --jobs 1 "$W/seq.yaml" || fail "sequential run failed"
id=$(last)
expect_eq "sequential states" "$(printf 'SUCCEEDED %.0s' $(seq 10) |
    sed 's/ $//')" "$(states "$id")"
prev=0
for i in $(seq 0 9); do
	"$VIGIL" logs "$id/$i" >"$W/o$i" || fail "logs $i"
	s=$(sed -n 's/^start //p' "$W/o$i") e=$(sed -n 's/^end //p' "$W/o$i")
	[ -n "$s" ] && [ -n "$e" ] || fail "task $i output: $(cat "$W/o$i")"
	[ "$s" -ge "$prev" ] || fail "task $i started before task $((i - 1)) ended"
	prev=$e
done
# Every task was seen RUNNING (its event) before it ended.
"$VIGIL" status "$id/9" >"$W/st9" || fail "status of task 9"
grep -q RUNNING "$W/st9" || fail "task 9 has no RUNNING event: $(cat "$W/st9")"

# 2. Cancelled while held: it never runs, and the task before it does.
cat >"$W/c.yaml" <<'Y'
version: 1
name: held-cancel
matrix:
  i: [0, 1, 2]
command: echo "ran ${{ matrix.i }}"; if [ ${{ matrix.i }} = 0 ]; then sleep 6; fi
Y
prev=$id
"$VIGIL" run -q --jobs 1 "$W/c.yaml" >/dev/null 2>&1 & vpid=$!
id=$(new_run "$prev")
wait_state "$id" 0 RUNNING
"$VIGIL" cancel "$id/1" >"$W/o" || fail "cancel task 1: $(cat "$W/o")"
wait $vpid
expect_eq "states after a held cancel" "SUCCEEDED CANCELLED SUCCEEDED" \
    "$(states "$id")"
expect_eq "reason" "cancelled before it started" \
    "$(jq_run "$id" "d['tasks'][1]['reason']")"
expect_eq "output of the cancelled task" "" "$("$VIGIL" logs "$id/1")"
expect_eq "output of the task after it" "ran 2" "$("$VIGIL" logs "$id/2")"

# 3. vigil killed while a task is held: the running one runs on, the held
# one never starts; resume runs it once.
"$VIGIL" run -q --jobs 1 "$W/c.yaml" >/dev/null 2>&1 & vpid=$!
id=$(new_run "$id")
wait_state "$id" 0 RUNNING
sleep 0.3
kill -9 $vpid
wait $vpid 2>/dev/null
# The orphan of task 0 ends (its sleep); nothing starts after it.
i=0
while [ $i -lt 100 ] && [ "$(run_procs "$id")" -gt 0 ]; do
	sleep 0.1; i=$((i + 1))
done
expect_eq "processes left" 0 "$(run_procs "$id")"
expect_eq "output of the held task" "" "$("$VIGIL" logs "$id/1" 2>/dev/null)"
"$VIGIL" resume -q "$id" >/dev/null 2>&1 || fail "resume failed"
expect_eq "states after resume" "SUCCEEDED SUCCEEDED SUCCEEDED" \
    "$(states "$id")"
# (each attempt's output under its header: the one that never started,
# recorded LOST, has none)
expect_eq "the held task ran once" "ran 1" \
    "$("$VIGIL" logs "$id/1" | grep -v '^--- attempt ')"
pass

#!/bin/sh
# Two drivers for one run: several `vigil resume RUN` (and a retry, a
# cancel) started at the same moment on a run whose vigil was killed.
# Exactly one drives it; the others exit at once naming the driver's pid
# and host; no task is started twice; the run ends SUCCEEDED.  Repeated
# so the race is really run.
. "$(dirname "$0")/sec-lib.sh"
ROUNDS=${ROUNDS:-6}
N=3		# resumes started together

round() {
	r=$1
	W=$tmp/w$r
	mkdir -p "$W"
	cat >"$W/k.yaml" <<Y
version: 1
name: two-drivers
matrix:
  i: [0, 1, 2, 3, 4, 5]
isolation:
  writable: ["$W"]
command: |
  echo start >> $W/start-\$VIGIL_TASK_INDEX
  # The first task's first start holds the run until vigil is killed.
  if [ \$VIGIL_TASK_INDEX = 0 ] && mkdir $W/held 2>/dev/null; then
    sleep 120
  fi
  sleep 0.3
  echo done >> $W/done-\$VIGIL_TASK_INDEX
Y
	"$VIGIL" run -q --jobs 1 "$W/k.yaml" >/dev/null 2>&1 &
	vpid=$!
	i=0
	while [ ! -d "$W/held" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	[ -d "$W/held" ] || fail "round $r: the first task never started"
	kill -9 $vpid
	wait $vpid 2>/dev/null
	id=$("$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
	# N resumes released at once by a barrier.
	mkfifo "$W/go"
	k=0
	while [ $k -lt $N ]; do
		( read -r _ <"$W/go"; "$VIGIL" resume -q "$id" \
		    >"$W/out.$k" 2>&1; echo $? >"$W/rc.$k" ) &
		k=$((k+1))
	done
	sleep 0.2
	: >"$W/go"	# opening the fifo for writing releases every reader
	wait
	ok=0 busy=0 k=0
	while [ $k -lt $N ]; do
		rc=$(cat "$W/rc.$k")
		if [ "$rc" = 0 ]; then
			ok=$((ok+1))
		elif grep -q "is being driven by vigil process [0-9]* on host '$(hostname)'" \
		    "$W/out.$k"; then
			busy=$((busy+1))
		else
			fail "round $r: resume $k exited $rc: $(cat "$W/out.$k")"
		fi
		k=$((k+1))
	done
	expect "$ok $busy" "1 $((N-1))" "round $r: resumes that drove, that were refused"
	state=$("$VIGIL" status "$id" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["state"])')
	expect "$state" SUCCEEDED "round $r: run state"
	# Task 0 ran twice (its first attempt was interrupted), the rest once.
	expect "$(wc -l <"$W/start-0")" 2 "round $r: starts of task 0"
	for t in 1 2 3 4 5; do
		expect "$(wc -l <"$W/start-$t" 2>/dev/null)" 1 "round $r: starts of task $t"
		expect "$(wc -l <"$W/done-$t")" 1 "round $r: ends of task $t"
	done
}

r=0
while [ $r -lt "$ROUNDS" ]; do
	round $r
	r=$((r+1))
done

# A retry racing a retry: the second is refused before it resets a task.
W=$tmp/retry
mkdir -p "$W"
cat >"$W/f.yaml" <<Y
version: 1
name: retry-race
matrix:
  i: [0, 1, 2]
isolation:
  writable: ["$W"]
command: |
  echo start >> $W/start-\$VIGIL_TASK_INDEX
  [ -e $W/fixed ] || exit 3
  sleep 0.5
Y
"$VIGIL" run -q "$W/f.yaml" >/dev/null 2>&1
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
touch "$W/fixed"
mkfifo "$W/go"
for k in 0 1; do
	( read -r _ <"$W/go"; "$VIGIL" retry -q --failed "$id" \
	    >"$W/out.$k" 2>&1; echo $? >"$W/rc.$k" ) &
done
sleep 0.2
: >"$W/go"
wait
# Either the second saw the run driven, or it came after the first ended
# (nothing left to retry): never two drivers.
for t in 0 1 2; do
	expect "$(wc -l <"$W/start-$t")" 2 "retry race: starts of task $t"
done
state=$("$VIGIL" status "$id" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["state"])')
expect "$state" SUCCEEDED "retry race: run state"
echo "s0601: ok"

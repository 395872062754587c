#!/bin/sh
# Dependencies between runs on Grid Engine: a run submitted with --after
# waits PENDING, with the reason `vigil status` shows, until the run it
# names ends; `any` then runs it (and only after that run's job ended),
# `ok` after a failed run can never be met: DEPENDENCY_NEVER_SATISFIED
# and no job is submitted for it.  vigil holds the run itself (Grid
# Engine's -hold_jid waits for any end, so it cannot say "after ok").
set -u
. "$(dirname "$0")/gridengine-lib.sh"

for n in prep next never; do
	cat >"$W/$n.yaml" <<Y
version: 1
name: $n
scheduler: gridengine
isolation:
  writable: ["$W"]
gridengine:
  poll_min: 1s
  poll_max: 2s
Y
done
echo 'command: sleep 10; date +%s.%N >'"$W"'/prep.end; exit 3' >>"$W/prep.yaml"
echo 'command: date +%s.%N >'"$W"'/next.start' >>"$W/next.yaml"
echo 'command: touch '"$W"'/never.ran' >>"$W/never.yaml"
a=$("$VIGIL" submit "$W/prep.yaml") || fail "submit prep"
b=$("$VIGIL" submit "$W/next.yaml" --after prep:any) || fail "submit next"
c=$("$VIGIL" submit "$W/never.yaml" --after prep) || fail "submit never"
# state and reason of next's task, once it has a reason (at most 8 s)
i=0
while :; do
	got=$(jq_run "$b" 'd["tasks"][0]["state"] + " " + str(d["tasks"][0]["reason"])')
	[ "${got#* }" != None ] || [ $i -ge 40 ] && break
	sleep 0.2; i=$((i + 1))
done
case "$got" in
"PENDING waiting for run $a (prep) to end (after any); it is RUNNING") ;;
"PENDING waiting for run $a (prep) to end (after any); it is QUEUED") ;;
*) fail "waiting: $got" ;;
esac
i=0
until [ "$(jq_run "$b" 'd["state"]')" = SUCCEEDED ] &&
    [ "$(jq_run "$c" 'd["state"]')" != RUNNING ]; do
	i=$((i + 1))
	[ $i -lt 150 ] || fail "runs did not end: $("$VIGIL" status)"
	sleep 0.2
done
expect_eq "prep" FAILED "$(jq_run "$a" 'd["state"]')"
python3 -c "import sys; sys.exit(float(open('$W/next.start').read()) <= float(open('$W/prep.end').read()))" ||
	fail "next started before prep ended"
expect_eq "never" DEPENDENCY_NEVER_SATISFIED \
    "$(jq_run "$c" 'd["tasks"][0]["state"]')"
[ -e "$W/never.ran" ] && fail "the never run ran"
[ -e "$VIGIL_HOME/runs/$c/gridengine/jobs" ] && fail "a job was submitted for never"
pass

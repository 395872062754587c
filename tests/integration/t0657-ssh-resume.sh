#!/bin/sh
# ssh backend: kill -9 of vigil mid-run, then vigil resume.  First vigil
# alone dies (the monitors outlive it and are adopted), then vigil and
# every monitor (resume finds each detached remote task by its remote
# directory and tails it from the sizes of the local files).  Every task
# completes, none runs twice (a counter file the task appends to), the
# output is whole, and nothing is left on the remote side: no task
# process (ps) and no remote directory.  Then a run cancelled while its
# vigil and monitors are dead: vigil cancel reaps the remote tasks.
. "$(dirname "$0")/ssh-lib.sh"
. "$here/resume-lib.sh"

# $4: the matrix values (the pool is this host's CPUs: two run at once).
mf() {
	manifest "$1" 'matrix:' "  i: [${4:-0, 1, 2}]" 'command: |' \
	    "  echo x >>$tmp/count/$2.\$VIGIL_TASK_INDEX" \
	    '  echo begin' "  sleep $3 # vigil-t0657-$2" '  echo end'
}

# Remote tasks of case $1 (their command line names it; the wrapper's
# time(1), where there is one, names it too and is not counted).
remote_procs() {
	ps -eo args= | grep "[v]igil-t0657-$1" | grep -vc '^/usr/bin/time '
}

mf "$tmp/a.yaml" adopt 6 "0, 1"
resume_case adopt "$tmp/a.yaml" 2 vigil
check "adopt: no remote process left" "$(remote_procs adopt)" 0
check "adopt: no remote dir left" "$(ls -A "$tmp/remote")" ""

# vigil gc of an ended run reaps what is left of it on its host: a
# remote attempt still running (without status) is killed and removed.
ended=$RUN_ID
mkdir -p "$tmp/remote/$ended/0/9"
(cd "$tmp/remote/$ended/0/9" && setsid sh -c \
    'echo $$ >tpid; sleep 300; : vigil-t0657-gc' \
    </dev/null >/dev/null 2>&1 &)
i=0
until [ -s "$tmp/remote/$ended/0/9/tpid" ] || [ $i -ge 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "gc: a leftover runs" "$(remote_procs gc)" 1
"$VIGIL" gc --older-than 0 >"$tmp/gc.out" 2>&1
check "gc: exit status" "$?" 0
check "gc: says what it removed" "$(grep '^ssh: ' "$tmp/gc.out")" \
    "ssh: killed 0/9 (task/attempt of run $ended on 127.0.0.1)
ssh: removed 0/9 (task/attempt of run $ended on 127.0.0.1)"
i=0
while [ "$(remote_procs gc)" -gt 0 ] && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "gc: leftover killed" "$(remote_procs gc)" 0
check "gc: remote dir removed" "$(ls -A "$tmp/remote")" ""

mf "$tmp/b.yaml" follow 8 "0, 1"
resume_case follow "$tmp/b.yaml" 2 all
check "follow: no remote process left" "$(remote_procs follow)" 0
check "follow: no remote dir left" "$(ls -A "$tmp/remote")" ""

# Cancel with nobody watching: the remote tasks are killed, their
# directories removed, the tasks CANCELLED.
mf "$tmp/c.yaml" cancel 120
"$VIGIL" run -q --jobs 3 "$tmp/c.yaml" >/dev/null 2>&1 &
vpid=$!
i=0
until [ "$(remote_procs cancel)" -ge 3 ] || [ $i -ge 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "cancel: remote tasks running" "$(remote_procs cancel)" 3
RUN_ID=$("$VIGIL" status --json last | python3 -c '
import json, sys; print(json.load(sys.stdin)["id"])')
mons=$(cat "$(rl_dir)"/tasks/*/monitor | cut -d' ' -f1)
kill -9 $vpid
for m in $mons; do
	kill -9 "$m" 2>/dev/null
done
wait $vpid 2>/dev/null
check "cancel: still running remotely" "$(remote_procs cancel)" 3
"$VIGIL" cancel "$RUN_ID" >"$tmp/cancel.out" 2>&1
check "cancel: exit status" "$?" 0
check "cancel: says what it removed" \
    "$(grep -c '^ssh: removed [0-2]/1 ' "$tmp/cancel.out")" 3
i=0
while [ "$(remote_procs cancel)" -gt 0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "cancel: no remote process left" "$(remote_procs cancel)" 0
check "cancel: no remote dir left" "$(ls -A "$tmp/remote")" ""
check "cancel: tasks cancelled" "$(rl_states)" \
    "CANCELLED CANCELLED CANCELLED"
exit $fail

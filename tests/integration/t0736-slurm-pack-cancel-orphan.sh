#!/bin/sh
# vigil cancel RUN/TASK of a packed task while the run's vigil is gone
# (kill -9): the task's marker (tasks/INDEX/cancel) is left and nothing
# is scancelled: the pack's element runs on with its other tasks.  Three
# tasks in one pack, one at a time: task 0 runs when vigil dies, task 1
# is cancelled before its pack reaches it, and never runs.  vigil resume
# re-attaches the rest: tasks 0 and 2 succeed, task 1 stays CANCELLED,
# one Slurm job for the run.
set -u
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/o.yaml" packorphan 3 \
    "'echo ran >> $W/ran-\${{ matrix.i }}; sleep 4'" \
    "isolation: {writable: [\"$W\"]}" '' "pack:
  tasks: 3
  parallel: 1
  steps: false"
"$VIGIL" run -q "$W/o.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
rd=$VIGIL_HOME/runs/$id
i=0
until [ -f "$W/ran-0" ]; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "task 0 never started: $("$VIGIL" status "$id")"
	sleep 0.5
done
kill -9 "$vpid"
wait "$vpid" 2>/dev/null
job=$(grep _ "$rd/slurm/jobs" | sed -n '1s/.* \([0-9]*\)_.*/\1/p')
[ -n "$job" ] || fail "no job in the journal: $(cat "$rd/slurm/jobs")"
out=$("$VIGIL" cancel "$id/1" 2>&1)
expect_eq "cancel task 1" "$id/1: cancelled (no vigil was driving it; 1\
 packed task(s) marked to cancel (tasks/INDEX/cancel); their packs' other\
 tasks go on)" "$out"
expect_eq "marker" cancel "$(cat "$rd/tasks/1/cancel")"
expect_eq "the pack's element still runs" RUNNING \
    "$(squeue -h -j "$job" -o %T 2>/dev/null)"
"$VIGIL" resume -q "$id" >"$W/r" 2>&1
rc=$?
expect_eq "states (resume exit $rc: $(cat "$W/r"))" \
    "SUCCEEDED CANCELLED SUCCEEDED" "$(states "$id")"
[ -f "$W/ran-1" ] && fail "the cancelled task 1 ran"
expect_eq "task 0 ran once" 1 "$(wc -l <"$W/ran-0")"
expect_eq "task 2 ran once" 1 "$(wc -l <"$W/ran-2")"
expect_eq "Slurm jobs of the run" "$job" \
    "$(sacct -X -n -P --name "$id" -S now-1hour -o JobID | sed 's/_.*//' | sort -u)"
pass

#!/bin/sh
# vigil cancel of a run whose tasks run and wait as Slurm array elements:
# every element is cancelled in Slurm (one scancel), the tasks end
# CANCELLED, and the reason names who cancelled (from sacct).
set -u
. "$(dirname "$0")/slurm-lib.sh"

start_sleepers can
"$VIGIL" cancel "$id" >"$W/o" 2>&1 || fail "cancel: $(cat "$W/o")"
wait $vpid
expect_eq "run exit status" 5 $?
expect_eq "states" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"
# Slurm agrees: nothing of the array is left running or pending.
expect_eq "slurm states" "CANCELLED" "$(sacct -X -n -P -j "$job" -o State |
    sed 's/ by .*//' | sort -u)"
expect_eq "squeue" "" "$(squeue -h -j "$job" -t pending,running 2>/dev/null)"
pass

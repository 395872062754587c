#!/bin/sh
# A packed run's vigil killed -9 right after sbatch answered, before the
# pack's job lines reached the journal (VIGIL_SLURM_KILL_AT=submitted):
# only the intent line of submit-1.sh is there, beside its pack file.
# vigil resume finds the pack's job by its script, journals each task in
# the element its pack file gives it and re-attaches: no second
# submission, each task ran once, all SUCCEEDED.
set -u
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/k.yaml" packkill 4 \
    "'echo ran >> $W/ran-\${{ matrix.i }}; sleep 1'" \
    "isolation: {writable: [\"$W\"]}" '' "pack:
  tasks: 2
  steps: false"
VIGIL_SLURM_KILL_AT=submitted "$VIGIL" run -q "$W/k.yaml" >"$W/out" 2>&1
expect_eq "vigil killed itself ($(cat "$W/out"))" 137 $?
id=$(last_run)
rd=$VIGIL_HOME/runs/$id
expect_eq "states before" "PENDING PENDING PENDING PENDING" "$(states "$id")"
expect_eq "job lines before" 0 "$(grep -c _ "$rd/slurm/jobs")"
expect_eq "intent" "intent submit-1.sh 1 0 0-1" "$(grep ^intent "$rd/slurm/jobs")"
[ -f "$rd/slurm/submit-1.pack" ] || fail "no pack file"
job=$(squeue -h --name "$id" -o %F | sort -u)
[ -n "$job" ] || job=$(sacct -X -n -P --name "$id" -o JobID | sed 's/_.*//' | sort -u)
[ -n "$job" ] || fail "the pack's job is not in Slurm"
"$VIGIL" resume -q "$id" >"$W/r" 2>&1
expect_eq "resume exit status ($(cat "$W/r"))" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "job ids" "${job}_0 ${job}_0 ${job}_1 ${job}_1" \
    "$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')"
expect_eq "attempts" "1 1 1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
for t in 0 1 2 3; do
	expect_eq "task $t ran once" 1 "$(wc -l <"$W/ran-$t")"
done
expect_eq "scripts" 1 "$(ls "$rd/slurm/" | grep -c '^submit-.*\.sh$')"
expect_eq "journal" "0 1 ${job}_0
1 1 ${job}_0
2 1 ${job}_1
3 1 ${job}_1" "$(grep _ "$rd/slurm/jobs" | sort)"
expect_eq "Slurm jobs of the run" "$job" \
    "$(sacct -X -n -P --name "$id" -S now-1hour -o JobID | sed 's/_.*//' | sort -u)"
pass

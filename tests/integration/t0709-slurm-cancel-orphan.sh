#!/bin/sh
# vigil cancel of a Slurm run whose vigil is dead (kill -9): vigil cancel
# itself scancels the run's array elements (one call per array job), from
# the job ids in the store, and from the journal for jobs the dead vigil
# never recorded (VIGIL_SLURM_KILL_AT=committed), by the run's job name
# for a chunk whose id never reached the journal (=submitted), and records
# the tasks CANCELLED.  RUN/TASK cancels only that task's element.
set -u
. "$(dirname "$0")/slurm-lib.sh"

start_sleepers orphan
kill -9 $vpid
wait $vpid 2>/dev/null
# Live elements in Slurm: "2 RUNNING" etc.
live() { squeue -h -r -j "$1" -t pending,running -o '%K %T' 2>/dev/null | sort; }
expect_eq "before" "0 RUNNING
1 RUNNING
2 PENDING" "$(live "$job")"

out=$("$VIGIL" cancel "$id/2" 2>&1)
expect_eq "cancel task 2" "$id/2: cancelled (no vigil was driving it; 1 Slurm\
 array element(s) cancelled, 1 scancel call(s))" "$out"
expect_eq "after task 2" "0 RUNNING
1 RUNNING" "$(live "$job")"
expect_eq "states after task 2" "RUNNING RUNNING CANCELLED" "$(states "$id")"

out=$("$VIGIL" cancel "$id" 2>&1)
expect_eq "cancel run" "$id: cancelled (no vigil was driving it; 2 Slurm\
 array element(s) cancelled, 1 scancel call(s))" "$out"
expect_eq "after run" "" "$(live "$job")"
expect_eq "states" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"
expect_eq "run state" CANCELLED "$(jq_run "$id" 'd["state"]')"
expect_eq "reason" "cancelled by vigil cancel (no vigil was running)" \
    "$(jq_run "$id" 'd["tasks"][0]["reason"]')"

# Jobs only the journal knows: vigil died before recording their ids.
sed 's/name: orphan/name: orphan2/; s/i: \[0, 1, 2\]/i: [0, 1]/' \
    "$W/c.yaml" >"$W/c2.yaml"
VIGIL_SLURM_KILL_AT=committed "$VIGIL" run -q "$W/c2.yaml" >"$W/out2" 2>&1
expect_eq "killed itself" 137 $?
id2=$(last_run)
expect_eq "no job ids in the store" "" \
    "$(jq_run "$id2" '"".join(t["job_id"] or "" for t in d["tasks"])')"
job2=$(grep _ "$VIGIL_HOME/runs/$id2/slurm/jobs" |
    sed -n '1s/.* \([0-9]*\)_.*/\1/p')
[ -n "$(live "$job2")" ] || fail "job $job2 of the journal is not in Slurm"
out=$("$VIGIL" cancel "$id2" 2>&1)
expect_eq "cancel journal-only run" "$id2: cancelled (no vigil was driving\
 it; 2 Slurm array element(s) cancelled, 1 scancel call(s))" "$out"
expect_eq "journal-only jobs gone" "" "$(live "$job2")"
expect_eq "states 2" "CANCELLED CANCELLED" "$(states "$id2")"

# A chunk whose job id never reached the journal (killed right after
# sbatch): vigil cancel finds its jobs by the run's name.
sed 's/name: orphan/name: orphan3/; s/i: \[0, 1, 2\]/i: [0, 1]/' \
    "$W/c.yaml" >"$W/c3.yaml"
VIGIL_SLURM_KILL_AT=submitted "$VIGIL" run -q "$W/c3.yaml" >"$W/out3" 2>&1
expect_eq "killed itself after sbatch" 137 $?
id3=$(last_run)
job3=$(squeue -h --name "$id3" -o %F | sort -u)
[ -n "$job3" ] || fail "no job of $id3 in Slurm"
expect_eq "no job lines" 0 "$(grep -c _ "$VIGIL_HOME/runs/$id3/slurm/jobs")"
out=$("$VIGIL" cancel "$id3" 2>&1)
expect_eq "cancel unjournaled run" "$id3: cancelled (no vigil was driving\
 it; 0 Slurm array element(s) and the jobs named after the run cancelled,\
 1 scancel call(s))" "$out"
expect_eq "unjournaled jobs gone" "" "$(live "$job3")"
expect_eq "states 3" "CANCELLED CANCELLED" "$(states "$id3")"
pass

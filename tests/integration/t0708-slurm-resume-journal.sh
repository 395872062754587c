#!/bin/sh
# vigil killed -9 after sbatch returned but before the job ids reached the
# store, at every point (VIGIL_SLURM_KILL_AT): before the job lines reach
# the journal (only the chunk's intent line is there; through the commands
# and through libslurm), right after them (the driver's transaction never
# commits: tasks PENDING) and after the commit (tasks QUEUED with no job
# id).  vigil resume re-attaches: one array job in Slurm, each task ran
# once, all SUCCEEDED.
set -u
. "$(dirname "$0")/slurm-lib.sh"

# check POINT STATE_BEFORE JOB_LINES_BEFORE [INTERFACE]
check() {
	cat >"$W/$1.yaml" <<Y
version: 1
name: kill-$1
scheduler: slurm
matrix:
  i: [0, 1]
isolation:
  writable: ["$W"]
slurm:
  interface: ${4:-cli}
  poll_min: 1s
  poll_max: 2s
command: |
  echo run >> $W/ran-$1-\${{ matrix.i }}
  sleep 2
Y
	VIGIL_SLURM_KILL_AT=${1%-lib} "$VIGIL" run -q "$W/$1.yaml" >"$W/$1.out" 2>&1
	expect_eq "$1: vigil killed itself ($(cat "$W/$1.out"))" 137 $?
	id=$(last_run)
	dir=$VIGIL_HOME/runs/$id
	expect_eq "$1: states before" "$2" "$(states "$id")"
	expect_eq "$1: job ids before" "" \
	    "$(jq_run "$id" '"".join(t["job_id"] or "" for t in d["tasks"])')"
	expect_eq "$1: journal before" "$3" "$(grep -c _ "$dir/slurm/jobs")"
	expect_eq "$1: intent" "intent submit-1.sh 1 0 0-1" \
	    "$(grep ^intent "$dir/slurm/jobs")"
	# The one job Slurm has for the run.
	job=$(squeue -h --name "$id" -o %F | sort -u)
	[ -n "$job" ] || job=$(sacct -X -n -P --name "$id" -o JobID |
	    sed 's/_.*//' | sort -u)
	"$VIGIL" resume -q "$id" >"$W/$1.o" 2>&1
	expect_eq "$1: resume exit status: $(cat "$W/$1.o")" 0 $?
	expect_eq "$1: states" "SUCCEEDED SUCCEEDED" "$(states "$id")"
	expect_eq "$1: job ids" "${job}_0 ${job}_1" \
	    "$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')"
	expect_eq "$1: attempts" "1 1" \
	    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
	for t in 0 1; do
		expect_eq "$1: ran-$t" 1 "$(wc -l <"$W/ran-$1-$t")"
	done
	expect_eq "$1: scripts" 1 "$(ls "$dir/slurm/" | grep -c '^submit-')"
	expect_eq "$1: journal" 2 "$(grep -c _ "$dir/slurm/jobs")"
	# Slurm saw one submission under the run's name (slurmdbd may
	# record the last end a moment after vigil saw it).
	n=0
	while [ "$(sacct -X -n -P --name "$id" -S now-1hour -o End |
	    grep -c '^[0-9]')" -lt 2 ] && [ $n -lt 50 ]; do
		sleep 0.2; n=$((n + 1))
	done
	expect_eq "$1: slurm jobs" "${job}_0 COMPLETED
${job}_1 COMPLETED" "$(sacct -X -n -P --name "$id" -S now-1hour \
	    -o JobID,State | tr '|' ' ' | sort)"
}
check submitted "PENDING PENDING" 0
check submitted-lib "PENDING PENDING" 0 lib
check journal "PENDING PENDING" 2
check committed "QUEUED QUEUED" 2
pass

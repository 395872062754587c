#!/bin/sh
# kill -9 of vigil while its Slurm jobs run, then vigil resume: it
# re-attaches to the same job ids; nothing is submitted twice (one sbatch,
# one journal line per task, each task ran once) and nothing is lost.
set -u
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/r.yaml" <<Y
version: 1
name: res
scheduler: slurm
matrix:
  i: [0, 1, 2, 3]
isolation:
  writable: ["$W"]
slurm:
  poll_min: 1s
  poll_max: 2s
command: |
  echo run >> $W/ran-\${{ matrix.i }}
  sleep 6
Y
"$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 2 30
before=$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')
kill -9 $vpid
wait $vpid 2>/dev/null
"$VIGIL" resume -q "$id" >"$W/o" 2>&1
expect_eq "resume exit status: $(cat "$W/o")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "same job ids" "$before" \
    "$(jq_run "$id" '" ".join(t["job_id"] for t in d["tasks"])')"
expect_eq "attempts" "1 1 1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
for t in 0 1 2 3; do expect_eq "ran-$t" 1 "$(wc -l <"$W/ran-$t")"; done
expect_eq "scripts" 1 "$(ls "$VIGIL_HOME/runs/$id/slurm/" | grep -c '^submit-')"
expect_eq "journal" 4 "$(grep -c _ "$VIGIL_HOME/runs/$id/slurm/jobs")"
pass

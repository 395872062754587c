#!/bin/sh
# reuse: true on the private Slurm cluster: a 30-task sweep whose task 7
# fails the first time, run again with 10 more matrix values, submits one
# array of exactly the 11 tasks without a result (10 new, task 7 again);
# the 29 others are CACHED, never submitted (no job id, no sacct record),
# with their first run's logs and collected outputs.  A third run packed
# (slurm.pack) with 4 more values submits one packed element for the 4
# misses.  --reuse-only on submit says what would run and submits
# nothing.
set -u
. "$(dirname "$0")/slurm-lib.sh"

cmd="'echo out \${{ matrix.i }} > \$VIGIL_SCRATCH_DIR/r.txt; echo task \${{ matrix.i }}; [ \${{ matrix.i }} -ne 7 ] || [ ! -e $W/fail7 ] || exit 3'"
top='reuse: true
outputs: ["r.txt"]'
jobs_of() { # RUN: the distinct Slurm array jobs of its tasks
	jq_run "$1" '" ".join(sorted({t["job_id"].split("_")[0] for t in d["tasks"] if t["job_id"]}))'
}
elements_of() { # RUN N: how many array elements its jobs had in sacct,
	# waiting up to 30 s for N (slurmdbd has them later than the run)
	_w=0
	while :; do
		_n=0
		for _j in $(jobs_of "$1"); do
			_n=$((_n + $(sacct -X -n -P -j "$_j" -o JobID | grep -c .)))
		done
		[ "$_n" -ge "$2" ] || [ $_w -ge 30 ] || { _w=$((_w + 1)); sleep 1; continue; }
		echo $_n
		return
	done
}

: >"$W/fail7"
slurm_yaml "$W/r.yaml" reuse 30 "$cmd" "$top"
"$VIGIL" validate "$W/r.yaml" >/dev/null 2>"$W/v" || fail "manifest: $(cat "$W/v")"
(cd "$W" && "$VIGIL" run -q "$W/r.yaml") >"$W/out" 2>&1
expect_eq "first run's exit status ($(cat "$W/out"))" 1 $?
id1=$(last_run)
expect_eq "first run: task 7" FAILED "$(jq_run "$id1" 'd["tasks"][7]["state"]')"
expect_eq "first run: succeeded" 29 \
    "$(jq_run "$id1" 'sum(t["state"] == "SUCCEEDED" for t in d["tasks"])')"
expect_eq "first run: one array of 30" 30 "$(elements_of "$id1" 30)"
rm -f "$W/fail7"

# --reuse-only: what would run, nothing submitted.
slurm_yaml "$W/r.yaml" reuse 40 "$cmd" "$top"
(cd "$W" && "$VIGIL" submit --reuse-only "$W/r.yaml") >"$W/ro" 2>&1 ||
	fail "submit --reuse-only: $(cat "$W/ro")"
expect_eq "--reuse-only makes no run" "$id1" "$(last_run)"
grep -qx '40 tasks: 29 reused, 11 would run; nothing was run' "$W/ro" ||
	fail "--reuse-only summary: $(tail -n 3 "$W/ro")"

(cd "$W" && "$VIGIL" run -q "$W/r.yaml") >"$W/out" 2>&1
expect_eq "second run's exit status ($(cat "$W/out"))" 0 $?
id2=$(last_run)
expect_eq "second run: cached" 29 \
    "$(jq_run "$id2" 'sum(t["state"] == "CACHED" for t in d["tasks"])')"
expect_eq "second run: ran" "7 30 31 32 33 34 35 36 37 38 39" \
    "$(jq_run "$id2" '" ".join(str(i) for i, t in enumerate(d["tasks"]) if t["state"] == "SUCCEEDED")')"
expect_eq "second run: no job id for a hit" "" \
    "$(jq_run "$id2" '" ".join(t["job_id"] for t in d["tasks"] if t["state"] == "CACHED" and t["job_id"])')"
expect_eq "second run: one job" 1 "$(jobs_of "$id2" | wc -w)"
expect_eq "second run: Slurm ran 11 elements" 11 "$(elements_of "$id2" 11)"
expect_eq "a hit's log is the first run's" "task 3" "$("$VIGIL" logs "$id2/3")"
expect_eq "a hit names what it reuses" "reused $id1/3 attempt 1" \
    "$(jq_run "$id2" 'd["tasks"][3]["reason"]')"
rd2=$VIGIL_HOME/runs/$id2
expect_eq "a hit's collected output" "out 3" \
    "$(cat "$rd2/tasks/3/outputs/r.txt" 2>&1)"

# Packed: four more values, one packed element for them.
slurm_yaml "$W/r.yaml" reuse 44 "$cmd" "$top" '' "pack:
  tasks: 8"
(cd "$W" && "$VIGIL" run -q "$W/r.yaml") >"$W/out" 2>&1
expect_eq "packed run's exit status ($(cat "$W/out"))" 0 $?
id3=$(last_run)
expect_eq "packed run: cached" 40 \
    "$(jq_run "$id3" 'sum(t["state"] == "CACHED" for t in d["tasks"])')"
expect_eq "packed run: ran" "40 41 42 43" \
    "$(jq_run "$id3" '" ".join(str(i) for i, t in enumerate(d["tasks"]) if t["state"] == "SUCCEEDED")')"
expect_eq "packed run: one packed element" 1 "$(elements_of "$id3" 1)"
pass

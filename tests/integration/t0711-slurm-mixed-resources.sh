#!/bin/sh
# t0710-slurm-mixed-resources: a sweep whose tasks ask their own CPUs
# (resources.cpus: ${{ matrix.c }}) on the private Slurm cluster: tasks
# with identical resources share one job array, tasks that differ go
# into another (one sbatch each, --cpus-per-task of the task's own), and
# each task's job holds the CPUs it asked (sacct's AllocCPUS).
set -u
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/m.yaml" <<'Y'
version: 1
name: mixed
scheduler: slurm
matrix:
  c: [1, 2]
  r: [a, b, c]
resources:
  cpus: ${{ matrix.c }}
slurm:
  poll_min: 1s
  poll_max: 3s
command: echo "asked ${{ matrix.c }}"
Y
"$VIGIL" run -q "$W/m.yaml" >"$W/out" 2>&1 || fail "run: $(cat "$W/out")"
id=$(last_run)
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
    "$(states "$id")"
dir=$VIGIL_HOME/runs/$id/slurm
expect_eq "two submissions" 2 "$(ls "$dir"/submit-*.sh | wc -l)" ||
    fail "scripts: $(cat "$dir"/submit-*.sh)"
# Which script holds which tasks, whatever order they were sent in.
for f in "$dir"/submit-*.sh; do
	c=$(sed -n 's/^#SBATCH --cpus-per-task=//p' "$f")
	printf '%s %s\n' "${c:-1}" \
	    "$(sed -n 's/^#SBATCH --array=\([0-9-]*\).*/\1/p' "$f")"
done | sort >"$W/arrays"
[ "$(tr '\n' ' ' <"$W/arrays" | sed 's/ $//')" = "1 0-2 2 3-5" ] ||
    fail "arrays by resources: $(cat "$W/arrays"; cat "$dir"/submit-*.sh)"
for i in 0 1 2 3 4 5; do
	c=1
	[ "$i" -lt 3 ] || c=2
	j=$(jq_run "$id" "d['tasks'][$i]['job_id']")
	expect_eq "task $i CPUs allocated (sacct)" "$c" \
	    "$(sacct_get "$j" AllocCPUS)"
done
jobs=$(jq_run "$id" '" ".join(sorted(set(t["job_id"].split("_")[0] for t in d["tasks"])))')
expect_eq "two array jobs" 2 "$(echo "$jobs" | wc -w)"
pass

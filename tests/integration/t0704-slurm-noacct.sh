#!/bin/sh
# Without accounting (sacct says "Slurm accounting storage is disabled")
# vigil tracks through squeue (the cli interface) or slurm_load_jobs
# (lib): successes and non-zero exits come back exactly.
set -u
SLURM_UP_ARGS=--no-accounting
. "$(dirname "$0")/slurm-lib.sh"

expect_eq "accounting" 0 "$VIGIL_SLURM_ACCOUNTING"
sacct -n -j 1 >/dev/null 2>"$W/err" && fail "sacct works without accounting"
for iface in cli lib; do
	cat >"$W/n.yaml" <<Y
version: 1
name: noacct-$iface
scheduler: slurm
matrix:
  i: [0, 1, 2]
slurm:
  interface: $iface
  poll_min: 1s
  poll_max: 2s
command: exit \${{ matrix.i }}
Y
	"$VIGIL" run -q "$W/n.yaml" >"$W/out" 2>&1
	expect_eq "$iface: exit status" 1 $?
	id=$(last_run)
	expect_eq "$iface: states" "SUCCEEDED FAILED FAILED" "$(states "$id")"
	expect_eq "$iface: exit codes" "0 1 2" \
	    "$(jq_run "$id" '" ".join(str(t["exit_code"]) for t in d["tasks"])')"
done
pass

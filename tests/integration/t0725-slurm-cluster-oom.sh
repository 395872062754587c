#!/bin/sh
# OUT_OF_MEMORY on the three-node cluster, where its nodes can enforce a
# job's memory: a task asking for 64 MB that touches 400 MB is recorded
# OOM (and retried with more memory per retry.memory_factor).  Slurm
# enforces memory through task/cgroup (or jobacct_gather polling); the
# test cluster runs TaskPlugin=task/none, and then this test says so and
# is skipped.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

tp=$(scontrol show config | sed -n 's/^TaskPlugin *= *//p')
jg=$(scontrol show config | sed -n 's/^JobAcctGatherType *= *//p')
case "$tp,$jg" in
*cgroup*|*,jobacct_gather/linux|*,jobacct_gather/cgroup) ;;
*)
	echo "skipped: the cluster's nodes cannot enforce memory:" \
	    "TaskPlugin=$tp and JobAcctGatherType=$jg, so nothing limits a" \
	    "job's memory and Slurm never ends one OUT_OF_MEMORY here"
	exit 77 ;;
esac
cat >"$W/o.yaml" <<Y
version: 1
name: oom
scheduler: slurm
resources:
  memory: 64M
retry:
  max: 1
  on: [oom]
  memory_factor: 8
slurm:
  interface: cli
  poll_min: 1s
command: python3 -c "b = bytearray(400 << 20); print(len(b))"
Y
"$VIGIL" run -q "$W/o.yaml" >"$W/out" 2>&1
id=$(last_run)
"$VIGIL" status "$id/0" | grep -q 'attempt 1  OOM' ||
	fail "attempt 1 not OOM: $("$VIGIL" status "$id/0")"
expect_eq "state" SUCCEEDED "$(states "$id")"
pass

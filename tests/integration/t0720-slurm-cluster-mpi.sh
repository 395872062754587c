#!/bin/sh
# On the three-node cluster (tests/harness/slurm-cluster-up): a task of
# three nodes whose command calls `srun hostname` sees three hosts; a task
# of three Slurm tasks with the default launcher (srun) runs its command
# once per rank, one on each node; an array of three one-CPU tasks
# spreads over the nodes.  Tracking stays batched: every squeue or sacct
# call (counted through a PATH wrapper) is one "slurm: query" of the
# debug log, covering every array job of the run, never one per node or
# per task.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

mkdir -p "$W/bin"
for c in squeue sacct; do
	real=$(command -v $c) || fail "$c not found"
	cat >"$W/bin/$c" <<W
#!/bin/sh
echo "$c \$*" >>"$W/calls"
exec $real "\$@"
W
	chmod +x "$W/bin/$c"
done
PATH=$W/bin:$PATH
export PATH

cat >"$W/n3.yaml" <<Y
version: 1
name: three-nodes
scheduler: slurm
resources:
  nodes: 3
  launcher: none
slurm:
  interface: cli
  poll_min: 1s
  poll_max: 2s
command: srun hostname | sort
Y
"$VIGIL" run -q "$W/n3.yaml" >"$W/out" 2>&1 || fail "3-node run: $(cat "$W/out")"
id=$(last_run)
expect_eq "3-node state" SUCCEEDED "$(states "$id")"
expect_eq "srun hostname" "node1 node2 node3" \
    "$(tr '\n' ' ' <"$VIGIL_HOME/runs/$id/tasks/0/stdout" | sed 's/ $//')"
grep -qx '#SBATCH --nodes=3' "$VIGIL_HOME/runs/$id/slurm/submit-1.sh" ||
	fail "no --nodes=3: $(cat "$VIGIL_HOME/runs/$id/slurm/submit-1.sh")"

cat >"$W/mpi.yaml" <<Y
version: 1
name: ranks
scheduler: slurm
resources:
  ntasks: 3
  ntasks_per_node: 1
  cpus_per_task: 1
slurm:
  interface: cli
  poll_min: 1s
  poll_max: 2s
command: echo "rank \$SLURM_PROCID of \$SLURM_NTASKS on \$(hostname)"
Y
"$VIGIL" run -q "$W/mpi.yaml" >"$W/out" 2>&1 || fail "ranks run: $(cat "$W/out")"
id=$(last_run)
expect_eq "ranks state" SUCCEEDED "$(states "$id")"
expect_eq "one line per rank" \
    "rank 0 of 3 on node1|rank 1 of 3 on node2|rank 2 of 3 on node3" \
    "$(sort "$VIGIL_HOME/runs/$id/tasks/0/stdout" | tr '\n' '|' | sed 's/|$//')"
grep -qx 'VIGIL_LAUNCHER=srun' "$VIGIL_HOME/runs/$id/slurm/submit-1.sh" ||
	fail "launcher srun not in the script"

: >"$W/calls"
slurm_yaml "$W/arr.yaml" spread 3 "hostname; sleep 3"
VIGIL_DEBUG=1 "$VIGIL" run -q "$W/arr.yaml" >"$W/out" 2>&1 ||
	fail "array run: $(cat "$W/out")"
id=$(last_run)
expect_eq "array states" "SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "array hosts" "node1 node2 node3" "$(cat "$VIGIL_HOME"/runs/"$id"/tasks/*/stdout | sort | tr '\n' ' ' | sed 's/ $//')"
calls=$(wc -l <"$W/calls")
queries=$(grep -c 'slurm: query: 1 array job(s)' "$W/out")
others=$(grep 'slurm: query:' "$W/out" | grep -vc 'slurm: query: 1 array job(s)')
expect_eq "queries covering another number of array jobs" 0 "$others"
expect_eq "squeue/sacct calls = batched queries ($(cat "$W/calls" | sort | uniq -c))" "$queries" "$calls"
[ "$calls" -ge 1 ] && [ "$calls" -le 12 ] ||
	fail "$calls tracking calls for a 3-task run of about 5 s"
echo "tracking: $calls call(s) for 3 tasks on 3 nodes"

# The examples, for real: examples/jobs/mpi.yaml (three ranks on three
# nodes), examples/jobs/slurm-array.yaml (six elements, three at once),
# and examples/sbatch/sweep.sbatch (vigil inside an allocation of two
# nodes, its tasks job steps).
top=$(cd "$(dirname "$0")/../.." && pwd)
"$VIGIL" run -q "$top/examples/jobs/mpi.yaml" >"$W/out" 2>&1 ||
	fail "examples/jobs/mpi.yaml: $(cat "$W/out")"
id=$(last_run)
expect_eq "mpi example" \
    "rank 0 of 3 on node1|rank 1 of 3 on node2|rank 2 of 3 on node3" \
    "$(sort "$VIGIL_HOME/runs/$id/tasks/0/stdout" | tr '\n' '|' | sed 's/|$//')"
"$VIGIL" run -q "$top/examples/jobs/slurm-array.yaml" >"$W/out" 2>&1 ||
	fail "examples/jobs/slurm-array.yaml: $(cat "$W/out")"
id=$(last_run)
expect_eq "array example" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
grep -qx '#SBATCH --array=0-5%3' "$VIGIL_HOME/runs/$id/slurm/submit-1.sh" ||
	fail "array example: no throttle: $(cat "$VIGIL_HOME/runs/$id/slurm/submit-1.sh")"
grep -qx '#SBATCH --comment="vigil example sweep"' "$VIGIL_HOME/runs/$id/slurm/submit-1.sh" ||
	fail "array example: no comment"
sb=$(sbatch --parsable --wait -o "$W/sbatch.out" \
    --export="ALL,VIGIL=$VIGIL,SWEEP=$top/examples/jobs/sweep.yaml" \
    "$top/examples/sbatch/sweep.sbatch") ||
	fail "examples/sbatch/sweep.sbatch: $(cat "$W/sbatch.out")"
id=$(last_run)
expect_eq "sbatch wrapper run" "sweep SUCCEEDED 6" "$(jq_run "$id" 'd["name"] + " " + d["state"] + " " + str(d["counts"]["SUCCEEDED"])')"
steps=$(sacct -n -P -j "$sb" -o JobID,NodeList | grep -c "^$sb\.[0-9]")
expect_eq "job steps of the wrapper" 6 "$steps"
pass

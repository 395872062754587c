#!/bin/sh
# slurm.pack with GPUs on the cluster's GPU node (node4: 2 CPUs, two
# fake GPUs as gres/gpu, tests/harness/slurm-cluster-up): six tasks of one
# GPU each, packed six to a job two at a time, are one array element
# asking for two GPUs; each task sees exactly one GPU in
# CUDA_VISIBLE_DEVICES, both GPUs are used, and the two tasks running at
# once never share one.  Once with each task a job step (Slurm gives the
# step its GPU) and once as processes of the job (vigil's own GPU pool
# splits the allocation's GPUs).  Unpacked, a one-GPU task gets one.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

cmd="'s=\$(date +%s.%N); sleep 2; echo \"gpu=\$CUDA_VISIBLE_DEVICES host=\$(hostname) \$s \$(date +%s.%N)\"'"
for steps in true false; do
	slurm_yaml "$W/g.yaml" "gpu-$steps" 6 "$cmd" '' 'gpus: 1
partition: gpu' "pack:
  tasks: 6
  parallel: 2
  steps: $steps"
	"$VIGIL" validate "$W/g.yaml" >/dev/null 2>"$W/v" ||
		fail "manifest: $(cat "$W/v")"
	"$VIGIL" run -q "$W/g.yaml" >"$W/out" 2>&1
	expect_eq "steps $steps: exit status ($(cat "$W/out"))" 0 $?
	id=$(last_run)
	rd=$VIGIL_HOME/runs/$id
	expect_eq "steps $steps: states" \
	    "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
	    "$(states "$id")"
	grep -q '^#SBATCH --gres=gpu:2$' "$rd/slurm/submit-1.sh" ||
		fail "steps $steps: the element does not ask for 2 GPUs: $(cat "$rd/slurm/submit-1.sh")"
	for i in 0 1 2 3 4 5; do
		tail -n 1 "$rd/tasks/$i/stdout"
	done >"$W/seen"
	python3 - "$W/seen" "$steps" <<'PY' || fail "steps $steps: GPUs: $(cat "$W/seen")"
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert len(rows) == 6, rows
gpus = [r[0] for r in rows]
assert all(g in ("gpu=0", "gpu=1") for g in gpus), gpus
assert set(gpus) == {"gpu=0", "gpu=1"}, gpus
assert all(r[1] == "host=node4" for r in rows), rows
iv = [(float(r[2]), float(r[3]), r[0]) for r in rows]
for a in range(6):
    for b in range(a + 1, 6):
        x, y = iv[a], iv[b]
        if x[0] < y[1] and y[0] < x[1]:
            assert x[2] != y[2], ("overlapping tasks share a GPU", x, y)
PY
done

# Unpacked: a one-GPU task is a job with one GPU.
slurm_yaml "$W/u.yaml" gpu-one 1 "'echo gpu=\$CUDA_VISIBLE_DEVICES'" '' \
    'gpus: 1
partition: gpu'
"$VIGIL" run -q "$W/u.yaml" >"$W/out" 2>&1
expect_eq "unpacked: exit status ($(cat "$W/out"))" 0 $?
id=$(last_run)
case $("$VIGIL" logs "$id/0") in
gpu=0|gpu=1) ;;
*) fail "unpacked: $("$VIGIL" logs "$id/0")" ;;
esac
pass

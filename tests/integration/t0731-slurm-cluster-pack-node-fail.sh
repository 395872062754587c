#!/bin/sh
# A node dies mid-pack on the three-node cluster: six tasks packed two to
# a job make three packs, one per node; the first task of each pack ends
# in a second, the second runs 25 s at its first attempt.  Once the
# first task of task 1's pack has succeeded and task 1 runs, every
# process of task 1's node is killed.  Task 1, unfinished, is recorded
# NODE_FAIL and runs again (retry.on node_fail) in a new pack that
# avoids the failed node; task 0, finished on that node, never runs
# again; the other packs' tasks succeed at their first attempt.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/nf.yaml" packnf 6 \
    "'case \${{ matrix.i }} in 1|3|5) [ \"\$VIGIL_ATTEMPT\" = 1 ] && sleep 25;; esac; echo attempt \$VIGIL_ATTEMPT on \$(hostname)'" \
    "retry: {max: 1, on: [node_fail], backoff: 0}" '' "pack:
  tasks: 2"
"$VIGIL" run -q "$W/nf.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
rd=$VIGIL_HOME/runs/$id
i=0
until [ -f "$rd/tasks/1/heartbeat" ] && [ -f "$rd/tasks/0/result.json" ]; do
	i=$((i + 1))
	[ $i -lt 90 ] || fail "task 1 never started: $("$VIGIL" status "$id")"
	sleep 1
done
node=$(sed -n 's/^attempt 1 on //p' "$rd/tasks/0/stdout")
case "$node" in node[123]) ;; *) fail "task 0 ran on '$node'" ;; esac
kill_node "$node" "$id/1" 90
wait "$vpid"
expect_eq "vigil exit status: $(cat "$W/out")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
    "$(states "$id")"
expect_eq "attempts" "1 2 1 1 1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
expect_eq "task 0's output (ran once)" "attempt 1 on $node" "$(cat "$rd/tasks/0/stdout")"
retry_node=$(sed -n 's/^attempt 2 on //p' "$rd/tasks/1/stdout")
case "$retry_node" in node[123]) ;; *) fail "task 1's retry ran on '$retry_node'" ;; esac
[ "$retry_node" != "$node" ] || fail "the retry ran on the failed node $node"
# The retry is a new pack of its own, excluding the failed node.
grep -qx "#SBATCH --exclude=$node" "$rd/slurm/submit-2.sh" ||
	fail "retry without --exclude=$node: $(cat "$rd/slurm/submit-2.sh")"
expect_eq "the new pack" "0 1 2 0" "$(cut -d' ' -f1-3,5 "$rd/slurm/submit-2.pack")"
pass

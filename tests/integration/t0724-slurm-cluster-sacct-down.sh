#!/bin/sh
# sacct unavailable for a while: slurmdbd of the three-node cluster is
# stopped for 20 s while three tasks run and a fourth waits for a node.
# vigil's query falls back to squeue while sacct fails, no task is
# called LOST while squeue knows it (the grace window is cut to 3 s so
# that a wrong verdict would show), and all four succeed.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

VIGIL_SLURM_GRACE=3
export VIGIL_SLURM_GRACE
slurm_yaml "$W/s.yaml" sacct-down 4 "sleep 12"
VIGIL_DEBUG=1 "$VIGIL" run -q "$W/s.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 3 60
dbd=$(cat "$VIGIL_SLURM_DIR/run/slurmdbd.pid")
kill "$dbd"
sleep 20
"$harness/slurm-cluster-up" >/dev/null || fail "slurmdbd did not come back"
wait "$vpid"
expect_eq "vigil exit status: $(tail -n 3 "$W/out")" 0 $?
expect_eq "states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" "$(states "$id")"
"$VIGIL" status "$id/0" >"$W/st0"
for k in 0 1 2 3; do
	"$VIGIL" status "$id/$k" | grep -q LOST &&
		fail "task $k was LOST: $("$VIGIL" status "$id/$k")"
done
grep -q 'slurm: query: .* failed via sacct' "$W/out" ||
	fail "sacct never failed while slurmdbd was down"
grep -q 'slurm: query: .* ok via squeue' "$W/out" ||
	fail "no squeue query while sacct failed"
echo "queries: $(grep -c 'via sacct' "$W/out") sacct, $(grep -c 'via squeue' "$W/out") squeue"
pass

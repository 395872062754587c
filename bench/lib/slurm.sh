# lib/slurm.sh - sourced by the Slurm benches after they set $top: a
# private work dir $W with its VIGIL_HOME and token bucket, a cluster of
# the benches' own (RPC counts and timings see no other user), and
# slurm_bench_cleanup, which cancels run $id, waits for its detached
# driver $dpid, stops the cluster and removes $W.
VIGIL=${VIGIL:-$top/build/vigil}
W=$(mktemp -d /tmp/vigil-bench-XXXXXX)
chmod 0755 "$W"
VIGIL_HOME=$W/home
VIGIL_SLURM_BUCKET=$W/bucket
VIGIL_SLURM_LEASE=$$
VIGIL_SLURM_DIR=${VIGIL_SLURM_DIR:-/tmp/vigil-slurm-bench}
VIGIL_SLURM_PORT=${VIGIL_SLURM_PORT:-16837}
export VIGIL_SLURM_DIR VIGIL_SLURM_PORT
export VIGIL_HOME VIGIL_SLURM_BUCKET VIGIL_SLURM_LEASE
slurm_bench_cleanup() {
	[ -z "${id:-}" ] || "$VIGIL" cancel "$id" >/dev/null 2>&1 || true
	# The detached driver writes its log until it is gone.
	i=0
	while [ -n "${dpid:-}" ] && [ -d "/proc/$dpid" ] && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	"$top/tests/harness/slurm-down" >/dev/null 2>&1
	rm -rf "$W"
}

#!/bin/sh
# slurm-pack.sh [N] [PER] - many short tasks on the three-node cluster of
# tests/harness/slurm-cluster-up (1 CPU per node): N tasks of `sleep 0.1`
# (default 2000), run to the end
#
#   unpacked  one array element (one Slurm job) per task
#   packed    slurm.pack.tasks: PER (default 100) tasks per element, each
#             a process of the job (slurm.pack.steps: false; STEPS=true
#             makes each a job step)
#
# Both in the same run, on the same cluster, one after the other, with a
# copy of build/vigil (VIGIL names another); prints
# the wall time of each (from `vigil run` to its exit) and the Slurm jobs
# each made (sacct -X, array elements counted one by one), the speedup
# (target >= 5) and the jobs ratio (target <= 2%).  SKIP_UNPACKED=1 runs
# the packed side only.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-2000}
PER=${2:-100}
STEPS=${STEPS:-false}
. "$top/bench/lib/slurm.sh"
# A private copy of vigil: the jobs exec it for minutes, a rebuild of
# build/vigil meanwhile must not pull it from under them.
bin=$(dirname "$(readlink -f "$VIGIL")")
cp "$VIGIL" "$W/vigil"
[ ! -x "$bin/vigil-shim" ] || cp "$bin/vigil-shim" "$W/vigil-shim"
VIGIL=$W/vigil
VIGIL_SLURM_VIGIL=$W/vigil
export VIGIL_SLURM_VIGIL
cleanup() {
	for r in "$VIGIL_HOME"/runs/*; do
		[ -d "$r" ] && scancel --name="${r##*/}" >/dev/null 2>&1
	done
	"$top/tests/harness/slurm-cluster-down" >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
env=$("$top/tests/harness/slurm-cluster-up") || exit 1
eval "$env"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# manifest NAME [SLURM LINES]: N tasks of sleep 0.1.
manifest() {
	python3 - "$N" "$1" "${2:-}" <<'P'
import sys
n, name, extra = int(sys.argv[1]), sys.argv[2], sys.argv[3]
print("version: 1\nname: %s\nscheduler: slurm" % name)
print("matrix:\n  i: [" + ", ".join(str(i) for i in range(n)) + "]")
print("resources:\n  cpus: 1\ntimeout: 1m")
print("slurm:\n  interface: cli\n  poll_min: 1s\n  poll_max: 5s")
if extra:
    print(extra)
print("command: sleep 0.1")
P
}

# side NAME FILE: runs FILE to its end; prints "MS JOBS SUCCEEDED".
side() {
	t0=$(now_ms)
	"$VIGIL" run -q "$2" >"$W/$1.out" 2>&1 || true
	t1=$(now_ms)
	run=$("$VIGIL" status --json | python3 -c 'import json,sys
d = json.load(sys.stdin)
runs = d if isinstance(d, list) else d.get("runs", [])
print(runs[0]["id"] if runs else "")')
	ok=$("$VIGIL" status "$run" --json | python3 -c 'import json,sys
print(sum(1 for t in json.load(sys.stdin)["tasks"] if t["state"] == "SUCCEEDED"))')
	# Every array element is a job of its own to Slurm (and to the
	# site's MaxSubmitJobs); slurmdbd may take a moment to have them.
	jobs=0
	i=0
	while [ $i -lt 60 ]; do
		jobs=$(sacct -X -n -P --name="$run" -S now-1day -o JobID | grep -c . || true)
		[ "$jobs" -gt 0 ] && break
		sleep 1; i=$((i + 1))
	done
	echo "$((t1 - t0)) $jobs $ok"
}

manifest bench-packed "  pack:
    tasks: $PER
    steps: $STEPS" >"$W/packed.yaml"
manifest bench-unpacked >"$W/unpacked.yaml"
set -- $(side packed "$W/packed.yaml")
p_ms=$1 p_jobs=$2 p_ok=$3
echo "slurm-pack: $N tasks of sleep 0.1 on 3 one-CPU nodes"
echo "  packed ($PER per job, steps: $STEPS): ${p_ms} ms, $p_jobs Slurm jobs, $p_ok succeeded"
[ "${SKIP_UNPACKED:-0}" = 1 ] && exit 0
set -- $(side unpacked "$W/unpacked.yaml")
u_ms=$1 u_jobs=$2 u_ok=$3
echo "  unpacked (one job per task):   ${u_ms} ms, $u_jobs Slurm jobs, $u_ok succeeded"
awk -v p="$p_ms" -v u="$u_ms" -v pj="$p_jobs" -v uj="$u_jobs" 'BEGIN {
	printf "  speedup: %.1fx (target >= 5)\n", (p > 0) ? u / p : 0
	printf "  jobs: %.2f%% of unpacked (target <= 2%%)\n",
	    (uj > 0) ? 100 * pj / uj : 0 }'

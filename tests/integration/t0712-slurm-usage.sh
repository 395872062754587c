#!/bin/sh
# Slurm accounting on the private cluster, through both interfaces: tasks
# whose use is known (200 MB touched, 1 s of CPU spun) report their CPU
# time and peak memory (vigil task-exec's shim on the node: its record
# wins), and what Slurm allocated comes from the one batched sacct query:
# tasks that ask for nothing are given AllocCPUS=1 and DefMemPerCPU=256M
# (AllocTRES mem=256M), which only sacct knows, and sacct's own lines say
# the same.  This cluster gathers nothing (jobacct_gather/none: TotalCPU
# 00:00:00, no MaxRSS), which vigil reads as unknown, not as zero.  With SLURM_UP_ARGS=--no-accounting (t0713) what was
# given is null (unknown), while the shim's numbers stay.
set -u
. "$(dirname "$0")/slurm-lib.sh"

ACCT=$VIGIL_SLURM_ACCOUNTING
KNOWN=$(cd "$(dirname "$0")/../data" && pwd)/known-use.py
cat >"$W/check.py" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
acct = sys.argv[3] == "1"
for t in d["tasks"]:
    u = t["usage"]
    mb = u["max_rss"] / 2**20
    assert 200 <= mb <= 320, ("peak", mb, u)
    assert 1.0 <= u["cpu"] <= 3.0, ("cpu", u)
    assert abs(u["cpu"] - u["cpu_user"] - u["cpu_sys"]) < 1e-6, u
    if acct:
        # AllocCPUS and AllocTRES mem= (DefMemPerCPU 256M x 1 CPU).
        assert u["cpus"] == 1 and u["mem_limit"] == 256 * 2**20, u
        assert u["mem_eff"] is not None and u["cpu_eff"] > 0, u
    else:
        assert u["cpus"] is None and u["mem_limit"] is None, u
        assert u["mem_eff"] is None, u
if acct:
    # sacct's own lines for the same elements: the allocation vigil
    # recorded, and TotalCPU, which jobacct_gather/none (this cluster)
    # leaves at 00:00:00; where a gather plugin fills it, it agrees.
    def secs(s):
        m, _, rest = s.rpartition(":")
        h, _, m = m.rpartition(":")
        return (int(h) if h else 0) * 3600 + int(m) * 60 + float(rest)
    rows = {}
    for l in open(sys.argv[2]):
        jid, cpu, ncpu, tres = l.rstrip("\n").split("|")
        if "." not in jid:
            rows[jid] = (secs(cpu), int(ncpu), dict(
                kv.split("=", 1) for kv in tres.split(",") if "=" in kv))
    for t in d["tasks"]:
        cpu, ncpu, tres = rows[t["job_id"]]
        assert ncpu == t["usage"]["cpus"] and tres["mem"] == "256M", (t, rows)
        assert cpu == 0 or 0.9 <= cpu <= 4.0, ("sacct TotalCPU", t["job_id"], cpu)
P
for iface in cli lib; do
	# Two tasks that ask for no resources: what they were given is
	# Slurm's to say.
	cat >"$W/k.yaml" <<Y
version: 1
name: usage-$iface
scheduler: slurm
matrix:
  i: [0, 1]
slurm:
  interface: $iface
  poll_min: 1s
  poll_max: 2s
command: [python3, "$KNOWN"]
Y
	"$VIGIL" run "$W/k.yaml" >"$W/out" 2>"$W/err" ||
	    fail "$iface: run: $(cat "$W/err")"
	id=$(last_run)
	"$VIGIL" status "$id" --json >"$W/s.json"
	job=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
	job=${job%%_*}
	: >"$W/sacct"
	if [ "$ACCT" = 1 ]; then
		# sacct's own view of the same job, once slurmdbd has both
		# elements (under load it may list one before the other).
		k=0
		while :; do
			sacct -n -P -j "$job" -o JobID,TotalCPU,AllocCPUS,AllocTRES >"$W/sacct" ||
			    fail "$iface: sacct"
			[ "$(grep -c "^${job}_[01]|" "$W/sacct")" -eq 2 ] && break
			[ $k -lt 50 ] || break	# the check below says what is missing
			sleep 0.2; k=$((k + 1))
		done
	fi
	python3 "$W/check.py" "$W/s.json" "$W/sacct" "$ACCT" ||
	    fail "$iface: usage: $(cat "$W/s.json") $(cat "$W/sacct")"
	"$VIGIL" status "$id" >"$W/table"
	grep -Eq '^ +1  SUCCEEDED +0 +1 +[0-9.]+s +[0-9.]+s +2[0-9][0-9]M ' "$W/table" ||
	    fail "$iface: status table: $(cat "$W/table")"
	if [ "$ACCT" = 1 ]; then
		grep -q 'peak memory 2[0-9][0-9]M of 256M asked' "$W/table" ||
		    fail "$iface: usage line: $(cat "$W/table")"
	fi
done
pass

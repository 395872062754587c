#!/bin/sh
# Dependencies between runs on Slurm (three-node cluster): a run
# submitted --after a running Slurm run without retries is handed to the
# cluster at once with --dependency=afterok:JOB (its array job) and
# --kill-on-invalid-dep=yes; Slurm holds it (squeue: PENDING Dependency) and
# starts it after the array succeeded.  After a run whose task fails,
# Slurm cancels the dependent job and vigil records
# DEPENDENCY_NEVER_SATISFIED.  A run waited for that has retries is
# waited for by vigil itself (PENDING, nothing submitted yet).
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

mk() {	# mk NAME COMMAND [RETRIES] [N]
	slurm_yaml "$W/$1.yaml" "$1" "${4:-1}" "$2" \
	    "retry: {max: ${3:-0}, backoff: 0}"
}
# wait_state RUN STATE SECONDS: until the run is in STATE.
wait_state() {
	end=$(( $(date +%s) + $3 ))
	until [ "$(jq_run "$1" 'd["state"]')" = "$2" ]; do
		[ "$(date +%s)" -lt $end ] ||
			fail "$1 never $2: $("$VIGIL" status "$1")"
		sleep 0.2
	done
}

mk dep-a "sleep 10" 0 2
mk dep-b "echo after"
a=$("$VIGIL" submit "$W/dep-a.yaml") || fail "submit dep-a"
wait_count "$a" QUEUED 0 1
i=0
until [ "$(jq_run "$a" 'sum(1 for t in d["tasks"] if t["job_id"])')" = 2 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "dep-a never submitted"; sleep 0.2
done
ja=$(jq_run "$a" 'd["tasks"][0]["job_id"].split("_")[0]')
b=$("$VIGIL" submit "$W/dep-b.yaml" --after dep-a) || fail "submit dep-b"
i=0
until [ -f "$VIGIL_HOME/runs/$b/slurm/submit-1.sh" ]; do
	i=$((i + 1)); [ $i -lt 50 ] || fail "dep-b not submitted: $("$VIGIL" status "$b")"; sleep 0.2
done
grep -qx "#SBATCH --dependency=afterok:$ja" "$VIGIL_HOME/runs/$b/slurm/submit-1.sh" ||
	fail "no --dependency=afterok:$ja: $(cat "$VIGIL_HOME/runs/$b/slurm/submit-1.sh")"
i=0
until [ -n "$(jq_run "$b" 'd["tasks"][0]["job_id"] or ""')" ]; do
	i=$((i + 1)); [ $i -lt 50 ] || fail "dep-b has no job: $("$VIGIL" status "$b")"; sleep 0.2
done
jb=$(jq_run "$b" 'd["tasks"][0]["job_id"].split("_")[0]')
# The reason is None until slurmctld's scheduler has looked at the job.
i=0
until [ "$(squeue -h -j "$jb" -o '%T %r')" = "PENDING Dependency" ]; do
	i=$((i + 1))
	[ $i -lt 40 ] || fail "dep-b not held by Slurm: $(squeue -h -j "$jb" -o '%T %r')"
	sleep 0.2
done
expect_eq "dep-a still running" RUNNING "$(jq_run "$a" 'd["state"]')"
wait_state "$b" SUCCEEDED 60
# dep-a's own vigil may record its end after Slurm started dep-b.
wait_state "$a" SUCCEEDED 30
aend=$(sacct -X -n -P -j "$ja" -o End | sort | tail -n 1)
bstart=$(sacct -X -n -P -j "$jb" -o Start | head -n 1)
[ "$(date -d "$bstart" +%s)" -ge "$(date -d "$aend" +%s)" ] ||
	fail "dep-b started at $bstart, before dep-a ended at $aend"

mk dep-f "sleep 3; exit 3"
mk dep-c "echo never"
f=$("$VIGIL" submit "$W/dep-f.yaml") || fail "submit dep-f"
i=0
until [ -n "$(jq_run "$f" 'd["tasks"][0]["job_id"] or ""')" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "dep-f never submitted"; sleep 0.2
done
c=$("$VIGIL" submit "$W/dep-c.yaml" --after dep-f) || fail "submit dep-c"
wait_state "$c" FAILED 60
expect_eq "dep-c task" DEPENDENCY_NEVER_SATISFIED "$(jq_run "$c" 'd["tasks"][0]["state"]')"
[ -s "$VIGIL_HOME/runs/$c/tasks/0/stdout" ] && fail "dep-c ran"
grep -q -- "--dependency=afterok:" "$VIGIL_HOME/runs/$c/slurm/submit-1.sh" ||
	fail "dep-c was not handed to Slurm"

mk dep-r "sleep 4" 1
mk dep-d "echo later"
r=$("$VIGIL" submit "$W/dep-r.yaml") || fail "submit dep-r"
d=$("$VIGIL" submit "$W/dep-d.yaml" --after "$r") || fail "submit dep-d"
sleep 2
case "$(jq_run "$d" 'd["tasks"][0]["reason"]')" in
"waiting for run $r ($r) to end (after ok); it is RUNNING") ;;
*) fail "dep-d: $("$VIGIL" status "$d")" ;;
esac
[ -e "$VIGIL_HOME/runs/$d/slurm/submit-1.sh" ] &&
	fail "dep-d submitted while dep-r (with retries) runs"
wait_state "$d" SUCCEEDED 60
grep -q -- "--dependency" "$VIGIL_HOME/runs/$d/slurm/submit-1.sh" &&
	fail "dep-d got a Slurm dependency on a finished run"
pass

#!/bin/sh
# Retries in place on the three-node cluster: four tasks in one pack
# (one array element), retry.on [failed, timeout] with max 1.  Task 0
# fails at its first run (a flag file) and succeeds at its second; task
# 1 runs past its 5 s time-out twice; tasks 2 and 3 succeed.  Both
# retries run inside the pack: one script, one Slurm job element in
# sacct for the whole run, each retry a job step of it; task 0 SUCCEEDED
# and task 1 TIMEOUT after 2 attempts each, shown by `vigil status
# RUN/TASK`; the siblings ran once, at attempt 1.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/r.yaml" <<Y
version: 1
name: pr
scheduler: slurm
matrix:
  i: [0, 1, 2, 3]
resources:
  cpus: 1
isolation:
  writable: ["$W"]
timeout: 5s
retry:
  max: 1
  on: [failed, timeout]
  backoff: 1s
slurm:
  interface: cli
  poll_min: 1s
  poll_max: 2s
  pack:
    tasks: 4
command: |
  echo "attempt \$VIGIL_ATTEMPT" >> $W/ran-\${{ matrix.i }}
  case \${{ matrix.i }} in
  0) [ -f $W/flag ] || { touch $W/flag; exit 4; } ;;
  1) sleep 30 ;;
  esac
  echo "done \${{ matrix.i }} at attempt \$VIGIL_ATTEMPT"
Y
"$VIGIL" validate "$W/r.yaml" >/dev/null || fail "manifest: $("$VIGIL" validate "$W/r.yaml" 2>&1)"
"$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1
expect_eq "vigil exit status ($(cat "$W/out"))" 1 $?
id=$(last_run)
rd=$VIGIL_HOME/runs/$id
expect_eq "states" "SUCCEEDED TIMEOUT SUCCEEDED SUCCEEDED" "$(states "$id")"
expect_eq "attempts" "2 2 1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
for t in 0 1; do
	expect_eq "runs of task $t" "attempt 1
attempt 2" "$(cat "$W/ran-$t")"
done
for t in 2 3; do
	expect_eq "runs of task $t" "attempt 1" "$(cat "$W/ran-$t")"
done
expect_eq "stdout of task 0" "done 0 at attempt 2" "$(tail -n 1 "$rd/tasks/0/stdout")"
# Both retries claimed by the pack, none submitted again.
for t in 0 1; do
	case $(cat "$rd/tasks/$t/claim.2") in
	"pack "*) ;;
	*) fail "task $t's retry not claimed by its pack: $(cat "$rd/tasks/$t/claim.2")" ;;
	esac
done
expect_eq "scripts" "submit-1.sh" "$(cd "$rd/slurm" && ls submit-*.sh | tr '\n' ' ' | sed 's/ $//')"
expect_eq "task 0's first attempt record" FAILED \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' "$rd/tasks/0/result.json.1")"
job=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
for t in 1 2 3; do
	expect_eq "element of task $t" "$job" "$(jq_run "$id" "d[\"tasks\"][$t][\"job_id\"]")"
done
job=${job%%_*}
expect_eq "Slurm jobs of the run" 1 "$(sacct -X -n -P -j "$job" -o JobID | grep -c .)"
# Each attempt a job step of that one element: two for tasks 0 and 1.
i=0
until [ "$(sacct -n -P -j "$job" -o JobName | grep -c '^pr\.')" = 6 ]; do
	i=$((i + 1))
	[ $i -lt 30 ] || break
	sleep 1
done
expect_eq "job steps" "pr.0 pr.0 pr.1 pr.1 pr.2 pr.3" \
    "$(sacct -n -P -j "$job" -o JobName | grep '^pr\.' | sort | tr '\n' ' ' | sed 's/ $//')"
"$VIGIL" status "$id/0" >"$W/s0" 2>&1
grep -q 'attempt 1  FAILED  *started' "$W/s0" || fail "status of task 0: $(cat "$W/s0")"
grep -q 'attempt 2  SUCCEEDED  *started' "$W/s0" || fail "status of task 0: $(cat "$W/s0")"
"$VIGIL" status "$id/1" >"$W/s1" 2>&1
expect_eq "task 1's attempts in status ($(cat "$W/s1"))" 2 "$(grep -c 'attempt [12]  TIMEOUT  *started' "$W/s1")"
pass

#!/bin/sh
# vigil run (direct scheduler) inside an sbatch allocation of 2 CPUs: each
# of 4 tasks is its own job step (its SLURM_STEP_ID, and sacct lists 4
# steps named after the tasks), at most 2 run at once, all results are
# recorded.  Then srun's own failure (a step asking for more memory than
# the allocation has) is told apart from a task's exit, a timeout is
# enforced inside the step, and vigil cancel reaches the running steps
# through Slurm.
set -u
. "$(dirname "$0")/slurm-lib.sh"

cat >"$W/sweep.yaml" <<Y
version: 1
name: steps
matrix:
  i: [0, 1, 2, 3]
isolation:
  writable: ["$W"]
command: |
  s=\$(date +%s.%N); sleep 2
  echo "\$SLURM_JOB_ID \$SLURM_STEP_ID \$s \$(date +%s.%N)" > $W/t-\${{ matrix.i }}
Y
# More than the allocation (2 CPUs x DefMemPerCPU 256M) but less than the
# host: the direct scheduler's pool (the host's memory) lets it through
# and srun refuses the step.
cat >"$W/big.yaml" <<'Y'
version: 1
name: big
resources:
  memory: 8G
command: "true"
# A pool that claims the memory, so that the step reaches srun, which
# refuses it (the allocation has far less).
pool:
  memory: 100G
Y
cat >"$W/can.yaml" <<'Y'
version: 1
name: can
matrix:
  i: [0, 1, 2]
command: sleep 300
Y
cat >"$W/to.yaml" <<'Y'
version: 1
name: to
timeout: 2s
kill_grace: 1s
command: sleep 60
Y
# The wrapper researchers write: vigil run inside the allocation.
cat >"$W/wrap.sh" <<Y
#!/bin/sh
#SBATCH -n2
#SBATCH -o $W/wrap.out
"$VIGIL" run -q "$W/sweep.yaml"; echo "sweep \$?" >"$W/rc"
"$VIGIL" run -q "$W/big.yaml"; echo "big \$?" >>"$W/rc"
"$VIGIL" run -q "$W/to.yaml"; echo "to \$?" >>"$W/rc"
"$VIGIL" run -q "$W/can.yaml" & pid=\$!
i=0
until [ "\$(ls "$VIGIL_HOME"/runs/*/tasks/*/step 2>/dev/null | wc -l)" -ge 7 ] ||
    [ \$i -ge 150 ]; do sleep 0.2; i=\$((i + 1)); done
"$VIGIL" cancel "\$("$VIGIL" status --json | python3 -c 'import json,sys
print("".join(r["id"] for r in json.load(sys.stdin)["runs"] if r["name"] == "can"))')" >/dev/null
wait \$pid; echo "can \$?" >>"$W/rc"
Y
job=$(sbatch --parsable "$W/wrap.sh") || fail "sbatch failed"
job=${job%%;*}
i=0
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] && [ $i -lt 300 ]; do
	sleep 0.2; i=$((i + 1))
done
[ $i -lt 300 ] || fail "wrapper job $job still running: $(cat "$W/wrap.out")"
got=$(tr '\n' ' ' <"$W/rc" | sed 's/ $//')
[ "$got" = "sweep 0 big 1 to 1 can 5" ] || fail "exit statuses: expected \
'sweep 0 big 1 to 1 can 5', got '$got'; $(cat "$W/wrap.out"; "$VIGIL" status;
    for r in "$VIGIL_HOME"/runs/*; do "$VIGIL" status "${r##*/}"; done)"

# run_named NAME: the id of the run of manifest NAME.
run_named() { "$VIGIL" status --json | python3 -c "import json,sys
print(''.join(r['id'] for r in json.load(sys.stdin)['runs'] if r['name'] == '$1'))"; }
sweep=$(run_named steps)
big=$(run_named big)
can=$(run_named can)
to=$(run_named to)
expect_eq "sweep states" "SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED" \
    "$(states "$sweep")"
# Every task ran in the wrapper's job, each in a step of its own.
expect_eq "jobs of the tasks" "$job" "$(cut -d' ' -f1 "$W"/t-* | sort -u)"
expect_eq "distinct steps" 4 "$(cut -d' ' -f2 "$W"/t-* | sort -u |
    grep -c '^[0-9][0-9]*$')"
expect_eq "sacct steps" "steps.0 COMPLETED
steps.1 COMPLETED
steps.2 COMPLETED
steps.3 COMPLETED" "$(sacct -j "$job" -n -P -o JobName,State |
    grep '^steps\.' | tr '|' ' ' | sort)"
# At most 2 at once on 2 CPUs (and the allocation was used: 2).
expect_eq "most at once" 2 "$(cat "$W"/t-* | python3 -c '
import sys
ev = []
for l in sys.stdin:
    j, s, a, b = l.split()
    ev += [(float(a), 1), (float(b), -1)]
n = m = 0
for _, d in sorted(ev, key=lambda e: (e[0], e[1])):
    n += d; m = max(m, n)
print(m)')"

# srun refused the step: not the task's exit.
expect_eq "big state" BACKEND_ERROR "$(states "$big")"
reason=$(jq_run "$big" 'd["tasks"][0]["reason"]')
case "$reason" in
"srun refused the step: srun: error: Unable to create step for job $job: "*)
	;;
*)	fail "big reason: $reason" ;;
esac

# The timeout is task-exec's (VIGIL_TIMEOUT), inside its step.
expect_eq "to state" TIMEOUT "$(states "$to")"
expect_eq "to reason" "timed out after 2s" "$(jq_run "$to" 'd["tasks"][0]["reason"]')"
grep -q "^$job\.[0-9]* " "$VIGIL_HOME/runs/$to/tasks/0/step" ||
    fail "the timed-out task ran outside a step"

# vigil cancel: the running steps get SIGTERM through Slurm; task-exec
# stops its task and records CANCELLED.
expect_eq "can states" "CANCELLED CANCELLED CANCELLED" "$(states "$can")"
for t in 0 1; do
	grep -q "^$job\.[0-9]* " "$VIGIL_HOME/runs/$can/tasks/$t/step" ||
	    fail "no step file for task $t"
	expect_eq "can/$t record" '"state": "CANCELLED",' \
	    "$(grep '"state"' "$VIGIL_HOME/runs/$can/tasks/$t/result.json")"
done
expect_eq "can/2 reason" "cancelled before it started" \
    "$(jq_run "$can" 'd["tasks"][2]["reason"]')"
pass

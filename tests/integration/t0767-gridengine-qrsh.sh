#!/bin/sh
# vigil run inside a Grid Engine parallel job (examples/sge/sweep.sge,
# a script that runs `vigil run`, submitted with -pe smp 2): the direct
# scheduler starts each task as a `qrsh -inherit` task of the job
# (tasks/INDEX/step.log holds qrsh's output): one at a time (two
# slots, the job script holding the first: job_is_first_task TRUE),
# exit statuses exactly as the command returned them, the job's
# variables passed on, a time-out enforced by task-exec on its side.
# VIGIL_GRIDENGINE_STEPS=never runs the tasks as processes of the job.
# On the private cell of tests/harness/sge-up.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

cat >"$W/m.yaml" <<Y
version: 1
name: inside
matrix:
  i: [0, 1, 2, 3, 4]
timeout: 6s
isolation:
  writable: ["$W"]
command: |
  s=\$(date +%s.%N)
  case \${{ matrix.i }} in
  2) exit 5 ;;
  3) sleep 60 ;;
  esac
  sleep 2
  echo "i=\${{ matrix.i }} job=\$JOB_ID slots=\$NSLOTS \$s \$(date +%s.%N)"
Y
# job MODE: runs the manifest through examples/sge/sweep.sge (a 3-slot
# parallel job, two slots here: the cell has as many as CPUs), waiting
# for it (qsub -sync y); prints the job's id.
top=$(cd "$here/../.." && pwd)
job() {
	(cd "$W" && VIGIL_GRIDENGINE_STEPS=$1 SWEEP=$W/m.yaml \
	    qsub -terse -sync y -pe smp 2 -o "$W/job.out" -e "$W/job.err" \
	    "$top/examples/sge/sweep.sge" 2>"$W/qsub.err" | head -n 1)
}

j=$(job auto)
[ -n "$j" ] || fail "qsub: $(cat "$W/qsub.err")"
id=$(last_run)
[ -n "$id" ] || fail "no run: $(cat "$W/job.out" "$W/job.err")"
rd=$VIGIL_HOME/runs/$id
expect_eq "states ($(cat "$W/job.err"))" \
    "SUCCEEDED SUCCEEDED FAILED TIMEOUT SUCCEEDED" "$(states "$id")"
expect_eq "exit codes" "0 0 5" \
    "$(jq_run "$id" '" ".join(str(t["exit_code"]) for t in d["tasks"][:3])')"
for i in 0 1 2 3 4; do
	[ -f "$rd/tasks/$i/step.log" ] ||
		fail "task $i did not run through qrsh -inherit (no step.log)"
done
for i in 0 1 4; do
	tail -n 1 "$rd/tasks/$i/stdout"
done >"$W/seen"
python3 - "$W/seen" "$j" <<'PY' || fail "tasks: $(cat "$W/seen")"
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert [r[0] for r in rows] == ["i=0", "i=1", "i=4"], rows
assert all(r[1] == "job=" + sys.argv[2] for r in rows), rows
assert all(r[2] == "slots=2" for r in rows), rows
PY
j=$(job never)
id=$(last_run)
rd=$VIGIL_HOME/runs/$id
expect_eq "never: states" \
    "SUCCEEDED SUCCEEDED FAILED TIMEOUT SUCCEEDED" "$(states "$id")"
[ ! -e "$rd/tasks/0/step.log" ] || fail "never: a task ran through qrsh"
pass

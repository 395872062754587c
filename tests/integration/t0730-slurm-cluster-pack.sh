#!/bin/sh
# slurm.pack on the three-node cluster: six tasks packed two to a job are
# one array of three elements (one Slurm job each, not six), each
# element's pack-exec running its two tasks one after the other as job
# steps.  Task 1 fails (exit 3), task 2 runs past its 8 s time-out,
# task 4 is cancelled alone (vigil cancel RUN/4) while it runs, and is
# CANCELLED although it ends with status 0 on the signal (as an unpacked
# task's scancel makes it); its pack sibling, task 5, still runs and
# succeeds; so do tasks 0 and 3.  Each
# task's stdout and result come back through the run directory as for
# an unpacked task, and no task runs twice.
set -u
SLURM_HARNESS=slurm-cluster
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/p.yaml" packed 6 \
    "'echo task \${{ matrix.i }} on \$(hostname); case \${{ matrix.i }} in 1) exit 3;; 2) sleep 30;; 4) trap \"exit 0\" TERM; sleep 120 & wait;; esac; echo done \${{ matrix.i }}'" \
    'timeout: 8s' '' "pack:
  tasks: 2"
"$VIGIL" validate "$W/p.yaml" >/dev/null || fail "manifest: $("$VIGIL" validate "$W/p.yaml" 2>&1)"
"$VIGIL" run -q "$W/p.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
rd=$VIGIL_HOME/runs/$id
# Task 4 is the first of the third pack: cancel it once it runs.
i=0
until [ -f "$rd/tasks/4/heartbeat" ]; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "task 4 never started: $("$VIGIL" status "$id")"
	sleep 1
done
"$VIGIL" cancel "$id/4" >/dev/null 2>&1 || fail "vigil cancel $id/4 failed"
wait "$vpid"
rc=$?
expect_eq "vigil exit status ($(cat "$W/out"))" 1 "$rc"
expect_eq "states" "SUCCEEDED FAILED TIMEOUT SUCCEEDED CANCELLED SUCCEEDED" \
    "$(states "$id")"
expect_eq "attempts" "1 1 1 1 1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
expect_eq "exit code of task 1" 3 "$(jq_run "$id" 'd["tasks"][1]["exit_code"]')"
# One array job of three elements; every task ran once.
expect_eq "scripts" "submit-1.sh" "$(cd "$rd/slurm" && ls submit-*.sh | tr '\n' ' ' | sed 's/ $//')"
grep -qx '#SBATCH --array=0-2' "$rd/slurm/submit-1.sh" ||
	fail "not three elements: $(cat "$rd/slurm/submit-1.sh")"
grep -q ' pack-exec ' "$rd/slurm/submit-1.sh" ||
	fail "the script does not run pack-exec: $(cat "$rd/slurm/submit-1.sh")"
job=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
job=${job%%_*}
expect_eq "jobs of the run" 3 "$(sacct -X -n -P -j "$job" -o JobID | grep -c .)"
expect_eq "stdout of task 5" "done 5" "$(tail -n 1 "$rd/tasks/5/stdout")"
grep -q '^task 0 on node[123]$' "$rd/tasks/0/stdout" ||
	fail "stdout of task 0: $(cat "$rd/tasks/0/stdout")"
# The tasks of a pack share its element; each was a job step of it.
expect_eq "element of tasks 4 and 5" \
    "$(jq_run "$id" 'd["tasks"][4]["job_id"]')" \
    "$(jq_run "$id" 'd["tasks"][5]["job_id"]')"
# Each task ran once: one job step named after it.
i=0
until [ "$(sacct -n -P -j "$job" -o JobName | grep -c '^packed\.')" = 6 ]; do
	i=$((i + 1))
	[ $i -lt 30 ] || break
	sleep 1
done
expect_eq "job steps named after the tasks" \
    "packed.0 packed.1 packed.2 packed.3 packed.4 packed.5" \
    "$(sacct -n -P -j "$job" -o JobName | grep '^packed\.' | sort | tr '\n' ' ' | sed 's/ $//')"
pass

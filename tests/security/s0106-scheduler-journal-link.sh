#!/bin/sh
# A link planted at a run's Grid Engine job journal (RUN/gridengine/jobs),
# pointing at lines that name another job of the cell (here a "victim"
# job standing for another user's), while the run's vigil is gone:
# `vigil cancel` and `vigil resume` refuse the journal, naming it, and
# never read it: the victim job is neither deleted nor re-attached.  On
# a real private Grid Engine cell (tests/harness/sge-up).
set -u
it_dir=$(cd "$(dirname "$0")/../integration" && pwd)
. "$it_dir/gridengine-lib.sh"

victim=$(qsub -terse -b y -N victim -o /dev/null -e /dev/null sleep 600) ||
    fail "qsub of the victim job"
victim=${victim%%.*}
alive() { qstat -j "$victim" >/dev/null 2>&1; }
alive || fail "the victim job $victim is not in the queue"
printf '0 1 %s.1\n0 1 %s.1\n' "$victim" "$victim" >"$W/forged"

ge_yaml "$W/r.yaml" journal-link 1 "'sleep 30'"
VIGIL_GRIDENGINE_KILL_AT=journal "$VIGIL" run -q "$W/r.yaml" >"$W/out" 2>&1
id=$(last_run)
jobs=$VIGIL_HOME/runs/$id/gridengine/jobs
[ -f "$jobs" ] || fail "no journal after the crash: $(cat "$W/out")"
mine=$(sed -n '/^[0-9]/s/.* \([0-9]*\)\..*/\1/p' "$jobs" | sort -u)
mv "$jobs" "$W/jobs.real"
ln -s "$W/forged" "$jobs"

"$VIGIL" cancel "$id" >"$W/c" 2>&1
[ $? -ne 0 ] || fail "cancel read the planted journal: $(cat "$W/c")"
grep -q "job journal '$VIGIL_HOME/runs/$id/gridengine/jobs'" "$W/c" ||
    fail "cancel does not name the journal: $(cat "$W/c")"
alive || fail "vigil cancel deleted the victim job through the link"

"$VIGIL" resume -q "$id" >"$W/r" 2>&1
[ $? -ne 0 ] || fail "resume read the planted journal: $(cat "$W/r")"
grep -q "job journal" "$W/r" || fail "resume does not name the journal: $(cat "$W/r")"
alive || fail "vigil resume deleted the victim job through the link"
expect_eq "the forged lines" "0 1 $victim.1" "$(head -1 "$W/forged")"

# A hard link of a file the attacker owns is refused the same way.
rm "$jobs"
ln "$W/forged" "$jobs"
"$VIGIL" cancel "$id" >"$W/c" 2>&1
[ $? -ne 0 ] || fail "cancel read a hard link: $(cat "$W/c")"
alive || fail "vigil cancel deleted the victim job through a hard link"

# The run's own journal back: cancel takes its own job, not the victim.
rm "$jobs"
mv "$W/jobs.real" "$jobs"
"$VIGIL" cancel "$id" >"$W/c" 2>&1 || fail "cancel of the run: $(cat "$W/c")"
alive || fail "the victim job went with the run's own"
for j in $mine; do
	n=0
	while qstat -j "$j" >/dev/null 2>&1 && [ $n -lt 30 ]; do
		sleep 1; n=$((n + 1))
	done
	qstat -j "$j" >/dev/null 2>&1 && fail "the run's job $j is still queued"
done
qdel "$victim" >/dev/null 2>&1
pass

#!/bin/sh
# vigil cancel of a Grid Engine run whose vigil is dead (kill -9): vigil
# cancel itself qdels the run's tasks, from the handles in the store and
# from the journal, and records the tasks CANCELLED; RUN/TASK takes only
# that task (qdel JOB -t I), the run the rest with one qdel of the job.
# Jobs the store never got (killed right after the journal) are found in
# the journal.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

ge_yaml "$W/c.yaml" orphan 3 "sleep 300"
"$VIGIL" run -q "$W/c.yaml" >"$W/out" 2>&1 &
vpid=$!
id=$(wait_run)
wait_count "$id" RUNNING 1 60
handle=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
job=${handle%%.*}
kill -9 $vpid
wait $vpid 2>/dev/null
# tasks of job in the queue: "1 2 3"
tasks() {
	qstat -xml -u root | python3 -c "
import re, sys
t = []
for jl in re.findall(r'<job_list.*?</job_list>', sys.stdin.read(), re.S):
    if re.search(r'<JB_job_number>$1</JB_job_number>', jl):
        m = re.search(r'<tasks>(\d+)(?:-(\d+))?', jl)
        lo = int(m.group(1)); hi = int(m.group(2) or lo)
        t += range(lo, hi + 1)
print(' '.join(map(str, sorted(t))))"
}
# gone JOB: until no task of JOB is in the queue (a running one shows
# "dr" while execd kills it), at most 20 s.
gone() {
	i=0
	while [ -n "$(tasks "$1")" ] && [ $i -lt 100 ]; do
		sleep 0.2; i=$((i + 1))
	done
	tasks "$1"
}
expect_eq "before" "1 2 3" "$(tasks "$job")"
out=$("$VIGIL" cancel "$id/2" 2>&1)
expect_eq "cancel task 2" "$id/2: cancelled (no vigil was driving it; 1 Grid\
 Engine task(s) cancelled, 1 qdel call(s))" "$out"
expect_eq "after task 2" "1 2" "$(tasks "$job")"
expect_eq "states after task 2" CANCELLED "$(jq_run "$id" 'd["tasks"][2]["state"]')"
out=$("$VIGIL" cancel "$id" 2>&1)
expect_eq "cancel run" "$id: cancelled (no vigil was driving it; 2 Grid\
 Engine task(s) cancelled, 1 qdel call(s))" "$out"
expect_eq "after run" "" "$(gone "$job")"
expect_eq "states" "CANCELLED CANCELLED CANCELLED" "$(states "$id")"

# Jobs only the journal knows.
sed 's/name: orphan/name: orphan2/' "$W/c.yaml" >"$W/c2.yaml"
VIGIL_GRIDENGINE_KILL_AT=journal "$VIGIL" run -q "$W/c2.yaml" >"$W/out2" 2>&1
expect_eq "killed itself" 137 $?
id2=$(last_run)
expect_eq "no job ids in the store" "" \
    "$(jq_run "$id2" '"".join(t["job_id"] or "" for t in d["tasks"])')"
job2=$(sed -n '/^[0-9]/{s/.* \([0-9]*\)\..*/\1/p;q;}' "$VIGIL_HOME/runs/$id2/gridengine/jobs")
expect_eq "journal job queued" "1 2 3" "$(tasks "$job2")"
out=$("$VIGIL" cancel "$id2" 2>&1)
expect_eq "cancel journal-only run" "$id2: cancelled (no vigil was driving\
 it; 3 Grid Engine task(s) cancelled, 1 qdel call(s))" "$out"
expect_eq "journal-only jobs gone" "" "$(gone "$job2")"

# A job only its chunk's intent line knows (vigil killed between qsub
# and the journal): found by its script in qstat, and cancelled.
sed 's/name: orphan/name: orphan3/' "$W/c.yaml" >"$W/c3.yaml"
VIGIL_GRIDENGINE_KILL_AT=qsub "$VIGIL" run -q "$W/c3.yaml" >"$W/out3" 2>&1
expect_eq "killed itself after qsub" 137 $?
id3=$(last_run)
j3=$VIGIL_HOME/runs/$id3/gridengine/jobs
expect_eq "no job line" 0 "$(grep -c '^[0-9]' "$j3")"
job3=$(qstat -xml -j "vigil-$id3" | sed -n 's|.*<JB_job_number>\([0-9]*\)<.*|\1|p' | head -1)
[ -n "$job3" ] || fail "the chunk's job is not queued"
out=$("$VIGIL" cancel "$id3" 2>&1)
expect_eq "cancel intent-only run" "$id3: cancelled (no vigil was driving\
 it; 3 Grid Engine task(s) cancelled, 1 qdel call(s))" "$out"
expect_eq "intent-only jobs gone" "" "$(gone "$job3")"
pass

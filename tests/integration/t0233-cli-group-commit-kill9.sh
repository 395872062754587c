#!/bin/sh
# Group commit keeps the crash contract (docs/state.md, "What is grouped
# and what must be durable first"): a fast run of many short tasks is
# killed with SIGKILL several times, at different moments, and resumed
# each time.  After every kill, every line progress printed (RUNNING,
# SUCCEEDED) is a state the store holds: nothing reported is lost.  At
# the end every task SUCCEEDED with exactly one succeeded attempt in the
# store: none ran again once finished, none is missing.  A bad
# VIGIL_GROUP_MS is told, with what would be valid, and not used.
set -u
. "$(dirname "$0")/engine-lib.sh"

N=3000
python3 - "$N" >"$W/m.yaml" <<'P'
import sys
n = int(sys.argv[1])
print("version: 1\nname: gc9\ncommand: [\"true\"]\nmatrix:\n  i: [%s]"
    % ", ".join(str(i) for i in range(n)))
P

# Checks that every task line of progress output $2 is held by the store
# of run $1; prints how many lines it checked.
check_lines() {
	python3 - "$VIGIL_HOME/vigil.db" "$1" "$2" <<'P'
import re, sqlite3, sys
db, run, path = sys.argv[1:4]
c = sqlite3.connect(db)
task = dict(c.execute("select idx, state from tasks where run_id = ?",
    (run,)))
att = {(i, a): s for i, a, s in c.execute(
    "select idx, attempt, state from attempts where run_id = ?", (run,))}
pat = re.compile(r"^vigil: %s/(\d+) \[[^]]*\] (RUNNING|SUCCEEDED)"
    r"(?: \(attempt (\d+)\))?" % re.escape(run))
n = 0
for line in open(path, errors="replace"):
    m = pat.match(line)
    if not m:
        continue
    i, st, a = int(m.group(1)), m.group(2), int(m.group(3) or 1)
    n += 1
    if (i, a) not in att:
        sys.exit("printed but not in the store: " + line.strip())
    if st == "SUCCEEDED" and (task.get(i) != "SUCCEEDED" or
        att[(i, a)] != "SUCCEEDED"):
        sys.exit("printed SUCCEEDED, store has task %s attempt %s: %s"
            % (task.get(i), att[(i, a)], line.strip()))
print(n)
P
}

# Waits (up to 20 s) until progress file $2 of vigil $1 shows a task
# line, or vigil has ended: a kill then lands while it drives, with
# progress printed, however slow the binary (a sanitized one is).
await_progress() {
	i=0
	while ! grep -q "^vigil: [0-9a-f-]*/[0-9]* " "$2" &&
	    kill -0 "$1" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

"$VIGIL" run --jobs 2 "$W/m.yaml" >/dev/null 2>"$W/p0" &
vpid=$!
# Killed once it drives (it has printed progress), not before.
await_progress $vpid "$W/p0"
sleep 0.1
kill -9 $vpid
wait $vpid 2>/dev/null
id=$(sed -n 's/^vigil: run \([0-9a-f-]*\): .*/\1/p' "$W/p0" | head -1)
[ -n "$id" ] || fail "no run id in: $(head -3 "$W/p0")"
interrupted=0
lines=0
k=0
for delay in 0.2 0.1 0.3 0.25 0.15; do
	st=$(jq_run "$id" 'd["state"]')
	[ "$st" = INTERRUPTED ] && interrupted=$((interrupted + 1))
	n=$(check_lines "$id" "$W/p$k" 2>&1) || fail "after kill $k: $n"
	lines=$((lines + n))
	[ "$st" = INTERRUPTED ] || break
	k=$((k + 1))
	"$VIGIL" resume "$id" >/dev/null 2>"$W/p$k" &
	vpid=$!
	await_progress $vpid "$W/p$k"
	sleep "$delay"
	kill -9 $vpid 2>/dev/null
	wait $vpid 2>/dev/null
done
# The kills must have landed in the middle of the run, with progress
# shown before them, for the checks above to mean anything.
[ $interrupted -ge 2 ] || fail "only $interrupted kill(s) interrupted the run"
[ $lines -gt 0 ] || fail "no progress line was checked"
if [ "$(jq_run "$id" 'd["state"]')" = INTERRUPTED ]; then
	"$VIGIL" resume "$id" >/dev/null 2>"$W/pend"
	expect_eq "last resume exit status" 0 $?
fi
expect_eq "run state" SUCCEEDED "$(jq_run "$id" 'd["state"]')"
expect_eq "store: tasks, succeeded attempts, tasks ended more than once" \
    "$N $N 0" "$(python3 - "$VIGIL_HOME/vigil.db" "$id" <<'P'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run = sys.argv[2]
ok = c.execute("select count(*) from tasks where run_id = ? and"
    " state = 'SUCCEEDED'", (run,)).fetchone()[0]
per = c.execute("select idx, count(*) from attempts where run_id = ? and"
    " state = 'SUCCEEDED' group by idx", (run,)).fetchall()
print(ok, len(per), sum(1 for _, k in per if k != 1))
P
)"
expect_eq "leftover processes" 0 "$(run_procs "$id")"

# The window is a number of milliseconds; another value is told and the
# default used (the run exists by then: it still runs, whole).
valid="expected milliseconds from 0 to 1000; using 10"
for bad in x 5ms -1 1001; do
	VIGIL_GROUP_MS=$bad "$VIGIL" run -q --jobs 2 "$W/m.yaml" >"$W/o" 2>&1 ||
	    fail "VIGIL_GROUP_MS=$bad: run failed: $(cat "$W/o")"
	grep -q "VIGIL_GROUP_MS='$bad' ignored: $valid" "$W/o" ||
	    fail "VIGIL_GROUP_MS=$bad: $(cat "$W/o")"
done
VIGIL_GROUP_MS=0 "$VIGIL" run -q --jobs 2 "$W/m.yaml" >"$W/o" 2>&1 ||
    fail "VIGIL_GROUP_MS=0: $(cat "$W/o")"
expect_eq "VIGIL_GROUP_MS=0 says nothing" "" "$(cat "$W/o")"
# Grouping commits less often than a transaction per poll (the driver's
# debug line counts its commits).
commits() {
	VIGIL_DEBUG=1 VIGIL_GROUP_MS=$1 "$VIGIL" run -q --jobs 2 "$W/m.yaml" \
	    2>&1 | sed -n "s/.*driver: \([0-9]*\) transaction(s) for $N \
task(s), group $1 ms/\1/p"
}
c0=$(commits 0)
c10=$(commits 10)
[ -n "$c0" ] && [ -n "$c10" ] || fail "no commit count: '$c0' '$c10'"
[ "$c10" -lt "$c0" ] || fail "grouped: $c10 commits, one per poll: $c0"
pass

#!/bin/sh
# vigil report: a run with retries, failures and a denied command rendered
# in headless Chromium (the table opening on the failed task, the
# timeline's attempts and their hover labels, no JavaScript error, a
# screenshot kept in build/test-artefacts/); the JSON
# form; a snapshot of a run in progress; a 100,000-task run within the
# limits (file < 20 MB, written in a few seconds, drawn by the browser);
# errors.  Accounting of a task whose use is known: 200 MB touched and
# 1 s of CPU.
set -u
. "$(dirname "$0")/engine-lib.sh"
. "$(dirname "$0")/report-lib.sh"

# --- accounting: a task that touches 200 MB and spins 1 s of CPU ---
cat >"$W/known.yaml" <<Y
version: 1
name: known
resources:
  memory: 1G
  cpus: 1
command: [python3, "$REPO/tests/data/known-use.py"]
Y
"$VIGIL" run "$W/known.yaml" >/dev/null 2>"$W/known.err" || fail "known: $(cat "$W/known.err")"
grep -Eq '^vigil: cpu [0-9]+% of requested, peak memory [0-9.]+M of 1G asked \([0-9]+%\)$' \
    "$W/known.err" || fail "no efficiency line: $(cat "$W/known.err")"
kid=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" status "$kid" --json >"$W/known.json"
python3 "$REPO/tests/data/known-usage.py" "$W/known.json" \
    --given 1:1073741824 --mem-eff 0.19:0.32 || fail "known usage"
python3 - "$W/known.json" <<'P' || fail "known usage: efficiency and wall"
import json, sys
u = json.load(open(sys.argv[1]))["tasks"][0]["usage"]
assert 0 < u["cpu_eff"] <= 1.5, u
assert u["wall"] >= u["cpu"] * 0.5, u
P
"$VIGIL" status "$kid" >"$W/known.table"
grep -Eq '^ +0  SUCCEEDED +0 +1 +[0-9.]+s +[0-9.]+s +2[0-9][0-9]M +[0-9]+%' "$W/known.table" ||
    fail "status table: $(cat "$W/known.table")"
"$VIGIL" status "$kid/0" | grep -Eq 'cpu [0-9.]+s \(user [0-9.]+, sys [0-9.]+\).*peak 2[0-9][0-9]M of 1G  1 cpu' ||
    fail "attempt line: $("$VIGIL" status "$kid/0")"

# --- a sweep with retries, failures and a denied command ---
cp "$REPO/examples/jobs/report.yaml" "$W/sweep.yaml"
"$VIGIL" run --jobs 3 "$W/sweep.yaml" >/dev/null 2>"$W/sweep.err"
expect_eq "sweep exit status" 1 $?
grep -q '^vigil: right size for the next run: resources.memory: ' "$W/sweep.err" ||
    fail "no right-size line: $(tail -3 "$W/sweep.err")"
cat >"$W/deny.yaml" <<'Y'
version: 1
name: deny
matrix:
  dir: [/tmp/vigil-report-test-none, /]
command: rm -rf ${{ matrix.dir }}
Y
"$VIGIL" run "$W/deny.yaml" >/dev/null 2>&1
expect_eq "denied run exit status" 3 $?
did=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
sid=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][1]["id"])')

out=$("$VIGIL" report "$sid") || fail "report"
dir=$(jq_run "$sid" 'd["dir"]')
expect_eq "default path" "$dir/report.html" "$out"
f=$dir/report.html
# Self-contained: nothing fetched from anywhere.
if grep -Eiq '(src|href)="(https?:)?//|@import|url\(http|fonts\.' "$f"; then
	fail "the page refers to something outside itself"
fi
render "$f" "$W/sweep"
# The table opens on the task that did not succeed; every task is a
# choice of the state filter away.
expect_eq "table rows" 1 "$(grep -o '<tr class="task" data-index="[0-9]' "$W/sweep.dom" | wc -l)"
grep -q '<tr class="task" data-index="3"' "$W/sweep.dom" ||
    fail "no table row for task 3"
grep -q 'showing 1 of 1 matching (6 tasks)' "$W/sweep.dom" ||
    fail "table: $(grep -o 'showing[^<]*' "$W/sweep.dom")"
grep -q '<option value="">every state (6)</option>' "$W/sweep.dom" ||
    fail "no way to show every task"
grep -q '<canvas id="timeline"[^>]*data-mode="attempts"[^>]*data-bars="9"' \
    "$W/sweep.dom" || fail "timeline: $(grep -o '<canvas[^>]*>' "$W/sweep.dom")"
probe "$f" "$W/sweep-probe"
python3 - "$W/sweep-probe.json" <<'P' || fail "timeline as drawn: $(cat "$W/sweep-probe.json")"
import json, sys
p = json.load(open(sys.argv[1]))
# Tasks 2, 3 and 5 ran twice: 3 failed both times, 2 and 5 once.
assert p["retried"] == 6 and p["bad"] == 4, p
assert p["narrow"] == 0 and p["hidden"] == 0 and p["mislabelled"] == 0, p
l = p["labels"]["3/2"]
assert l.startswith("task 3 [mb=100 spin=1.0]\nattempt 2 of 2\n"
    "FAILED, exit 4") or "\ntask 3 attempt 2 (FAILED)" in l, l
P
grep -Eq 'class="failure" data-task="3"' "$W/sweep.dom" || fail "no failure entry"
grep -q 'a task that always fails: its stderr tail is in the report' "$W/sweep.dom" ||
    fail "no stderr tail"
for h in hist-mem hist-cores hist-eff hist-wall; do
	grep -q "id=\"$h\"" "$W/sweep.dom" || fail "no histogram $h"
done
grep -q 'class="bar"' "$W/sweep.dom" || fail "histograms have no bars"
grep -q 'Right size for the next run: resources.memory' "$W/sweep.dom" ||
    fail "no suggestion in the page"
if grep -q 'id="snapshot"' "$W/sweep.dom"; then fail "an ended run is no snapshot"; fi
shoot "$f" "$ARTEFACTS/report.png"

# Policy decisions: the denied command and why.
"$VIGIL" report "$did" -o "$W/deny.html" >/dev/null || fail "report -o"
render "$W/deny.html" "$W/deny"
grep -q 'class="decision" data-verdict="deny"' "$W/deny.dom" || fail "no denial listed"
grep -q 'rm -rf /' "$W/deny.dom" || fail "denied command not shown"
grep -q '1 denied' "$W/deny.dom" || fail "policy counts"

# JSON: the same data.
"$VIGIL" report "$sid" --json >"$W/r.json" || fail "report --json"
python3 - "$W/r.json" <<'P' || fail "report JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["vigil_report"] == 1 and d["snapshot"] is False
assert d["run"]["name"] == "report-demo" and d["run"]["ntasks"] == 6
tf = {n: i for i, n in enumerate(d["task_fields"])}
af = {n: i for i, n in enumerate(d["attempt_fields"])}
assert d["matrix_keys"] == ["mb", "spin"], d["matrix_keys"]
assert len(d["tasks"]) == 6 and len(d["attempts"]) == 9
st = [d["states"][t[tf["state"]]] for t in d["tasks"]]
assert st.count("SUCCEEDED") == 5 and st.count("FAILED") == 1, st
t5 = d["tasks"][5]
assert t5[tf["matrix"]] == ["200", "1.0"] and t5[tf["attempts"]] == 2
assert t5[tf["max_rss"]] > 200 * 2**20 and t5[tf["mem_limit"]] == 2**30
assert all(a[af["lane"]] >= 0 for a in d["attempts"])
assert d["failures_total"] == 1 and "always fails" in d["failures"][0]["stderr_tail"]
assert d["usage"]["suggestion"].startswith("resources.memory: ")
P

# A run in progress: the page says it is a snapshot.
cat >"$W/slow.yaml" <<'Y'
version: 1
name: slow
command: sleep 30
Y
"$VIGIL" run -q "$W/slow.yaml" >/dev/null 2>&1 &
vp=$!
i=0
while [ $i -lt 100 ]; do
	slid=$("$VIGIL" status --json | python3 -c \
	    'import json,sys; r=json.load(sys.stdin)["runs"][0]; print(r["id"] if r["name"]=="slow" and r["counts"]["RUNNING"] else "")')
	[ -n "$slid" ] && break
	sleep 0.1; i=$((i + 1))
done
[ -n "$slid" ] || fail "slow run never ran"
"$VIGIL" report "$slid" -o "$W/snap.html" >/dev/null || fail "snapshot report"
kill -INT $vp; wait $vp
render "$W/snap.html" "$W/snap"
grep -q 'id="snapshot"' "$W/snap.dom" || fail "no snapshot banner"
grep -q '<canvas id="timeline"[^>]*data-bars="1"' "$W/snap.dom" &&
    grep -q '<span data-state="RUNNING">' "$W/snap.dom" ||
    fail "running attempt not drawn"

# Errors: unknown run, unwritable output, no run given.
"$VIGIL" report nosuchrun 2>"$W/e"; expect_eq "unknown run rc" 2 $?
grep -q "nosuchrun" "$W/e" || fail "unknown run message: $(cat "$W/e")"
"$VIGIL" report "$sid" -o /nonexistent/dir/r.html 2>"$W/e"; expect_eq "bad -o rc" 4 $?
grep -q '/nonexistent/dir' "$W/e" || fail "bad -o message: $(cat "$W/e")"
[ ! -e /nonexistent/dir/r.html ] || fail "half-written report"
"$VIGIL" report 2>"$W/e"; expect_eq "no run rc" 2 $?

# --- 100,000 tasks: size, time, and the browser draws it ---
big=$("$REPO/bench/lib/synth-run.sh" "$VIGIL" 100000) || fail "synthesising the run"
t0=$(date +%s%3N)
"$VIGIL" report "$big" -o "$W/big.html" >/dev/null || fail "big report"
t1=$(date +%s%3N)
size=$(stat -c %s "$W/big.html")
echo "100,000-task report: $size bytes in $((t1 - t0)) ms"
[ "$size" -lt 20000000 ] || fail "report of $size bytes (limit 20 MB)"
# Generous here (a shared, loaded machine; a binary under ASan and UBSan,
# VIGIL_SANITIZED=1, runs several times slower); bench/report.sh holds
# the 2 s.
limit=10000
[ "${VIGIL_SANITIZED:-}" = 1 ] && limit=60000
[ $((t1 - t0)) -lt $limit ] || fail "report took $((t1 - t0)) ms (limit $limit)"
render "$W/big.html" "$W/big" 20000
grep -q '<canvas id="timeline"[^>]*data-bars="105000"' "$W/big.dom" ||
    fail "big timeline: $(grep -o '<canvas[^>]*>' "$W/big.dom")"
grep -q 'showing 1798 of 1798 matching (100000 tasks)' "$W/big.dom" ||
    fail "big table: $(grep -o 'showing[^<]*' "$W/big.dom")"
ms=$(sed -n 's/.*data-render-ms="\([0-9]*\)".*/\1/p' "$W/big.dom")
echo "100,000-task report drawn in $ms ms"
[ "$ms" -lt 15000 ] || fail "drawing took $ms ms"
shoot "$W/big.html" "$ARTEFACTS/report-100k.png" 1000
pass

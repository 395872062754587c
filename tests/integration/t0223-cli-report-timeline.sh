#!/bin/sh
# vigil report's timeline and task table, checked in headless Chromium
# through tests/data/report-probe.js and a screenshot: a run with
# retries, failures and a timeout on --jobs slots draws one lane per
# executor slot (the slots the store recorded), every attempt that did
# not succeed visible (at least the page's minimum width, not covered by
# a success, its colour on screen) and labelled on hover with its task,
# attempt, state and exit; the table opens on the tasks that did not
# succeed, with a way to show all, and on every task when all succeeded.
# The same at 10,000 tasks (bench/lib/synth-run.sh: 16 nodes, failures,
# timeouts, OOMs and retries among successes; here every attempt that
# did not succeed lasts 0.2 s, under a pixel), with the time to write
# and to draw the page.  Screenshots are kept in build/test-artefacts/.
set -u
. "$(dirname "$0")/engine-lib.sh"
. "$(dirname "$0")/report-lib.sh"
[ "$(nproc)" -ge 2 ] || { echo "skipped: one CPU runs one slot"; exit 77; }

# Colours of the page (COLORS in runner/core/report/report.html).
RED=d9453d GREEN=2e9e5b

# --- a run with retries, failures and a timeout, two slots or more ---
cat >"$W/tl.yaml" <<'Y'
version: 1
name: timeline
matrix:
  n: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
command: |
  sleep 0.$(( VIGIL_MATRIX_N % 4 + 2 ))
  case ${{ matrix.n }} in
  3|7) if [ "$VIGIL_ATTEMPT" -lt 2 ]; then echo "first try fails" >&2; exit 3; fi ;;
  5) echo "always fails" >&2; exit 5 ;;
  9) sleep 5 ;;
  esac
  exit 0
timeout: 1s
retry:
  max: 1
  on: [failed]
  backoff: 0s
Y
"$VIGIL" run -q --jobs 2 "$W/tl.yaml" >/dev/null 2>"$W/tl.err"
expect_eq "run exit status" 1 $?
"$VIGIL" report last -o "$W/tl.html" >/dev/null || fail "report"
"$VIGIL" report last --json >"$W/tl-doc.json" || fail "report --json"
python3 - "$W/tl-doc.json" <<'P' || fail "the document's lanes"
import json, sys
d = json.load(open(sys.argv[1]))
af = {n: i for i, n in enumerate(d["attempt_fields"])}
A = d["attempts"]
st = [d["states"][a[af["state"]]] for a in A]
assert len(A) == 15, len(A)
assert st.count("FAILED") == 4 and st.count("TIMEOUT") == 1, st
# Lanes are the slots the direct scheduler recorded: 1 and 2.
assert d["lanes_from"] == "slot", d["lanes_from"]
assert len(d["lanes"]) == 2, d["lanes"]
assert sorted({a[af["slot"]] for a in A}) == [1, 2]
assert all(d["lanes"][a[af["lane"]]].endswith("/%d" % a[af["slot"]])
    for a in A)
# No two attempts of one slot overlap in time.
for lane in (0, 1):
    v = sorted((a[af["start"]], a[af["end"]]) for a in A if a[af["lane"]] == lane)
    assert all(v[i][1] <= v[i + 1][0] + 0.002 for i in range(len(v) - 1)), v
assert [a[af["reason"]] for a in A if a[af["task"]] == 5] == ["exit status 5"] * 2
P
probe "$W/tl.html" "$W/tl"
python3 - "$W/tl.json" <<'P' || fail "the timeline as drawn: $(cat "$W/tl.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["lanes"] == 2 and p["rows"] == 2, p
# Attempts that did not succeed: 3 and 7's first, both of 5, 9's one.
assert p["bad"] == 5, p["bad"]
assert p["narrow"] == 0 and p["hidden"] == 0, p
assert p["mislabelled"] == 0, p
assert p["bad_label"].startswith("task 3 [n=3]\nattempt 1 of 2 (retried)\n"
    "FAILED, exit 3"), p["bad_label"]
assert "\nstart " in p["bad_label"] and ", duration " in p["bad_label"]
assert p["good_label"].startswith("task 0 [n=0]\nattempt 1 of 1\n"
    "SUCCEEDED, exit 0"), p["good_label"]
assert p["retried"] == 6, p["retried"]
assert p["failed_px"] > 0, p["failed_px"]
# The table opens on the tasks that did not succeed.
assert sorted(p["table"]) == ["FAILED", "TIMEOUT"], p["table"]
assert p["filter"] == "!SUCCEEDED" and p["show_all_hidden"] is False, p
assert p["shown"] == "showing 2 of 2 matching (12 tasks)", p["shown"]
P
box=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["box"]; print(int(b["x"]), int(b["y"]), int(b["x"]+b["width"]), int(b["y"]+b["height"]))' "$W/tl.json")
shoot "$W/tl.html" "$ARTEFACTS/report-timeline.png" 1000
set -- $box
red=$(python3 "$REPO/tests/data/png-count.py" "$ARTEFACTS/report-timeline.png" "$@" $RED)
green=$(python3 "$REPO/tests/data/png-count.py" "$ARTEFACTS/report-timeline.png" "$@" $GREEN)
echo "timeline on screen: $red pixels of FAILED, $green of SUCCEEDED"
[ "$red" -gt 0 ] || fail "no FAILED pixel in the timeline's screenshot"
[ "$green" -gt 0 ] || fail "no SUCCEEDED pixel in the timeline's screenshot"

# --- every task succeeded: the table opens on all of them ---
cat >"$W/ok.yaml" <<'Y'
version: 1
name: ok
matrix:
  n: [1, 2, 3]
command: "true"
Y
"$VIGIL" run -q "$W/ok.yaml" >/dev/null 2>&1 || fail "ok run"
"$VIGIL" report last -o "$W/ok.html" >/dev/null || fail "ok report"
probe "$W/ok.html" "$W/ok"
python3 - "$W/ok.json" <<'P' || fail "all succeeded: $(cat "$W/ok.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["table"] == ["SUCCEEDED"] * 3 and p["filter"] == "", p
assert p["show_all_hidden"] is True and p["bad"] == 0, p
P

# --- 10,000 tasks on 16 nodes: failures stay visible ---
big=$("$REPO/bench/lib/synth-run.sh" "$VIGIL" 10000) || fail "synthesising the run"
# Every attempt that did not succeed ends 0.2 s after its start: under a
# pixel of a timeline some 430 s wide, among successes of 20 s to 45 s.
sqlite3 "$VIGIL_HOME/vigil.db" "UPDATE attempts SET ended = started + 0.2
    WHERE run_id = '$big' AND state != 'SUCCEEDED'" || fail "short failures"
t0=$(date +%s%3N)
"$VIGIL" report "$big" -o "$W/big.html" >/dev/null || fail "big report"
t1=$(date +%s%3N)
echo "10,000-task report: $(stat -c %s "$W/big.html") bytes in $((t1 - t0)) ms"
"$VIGIL" report "$big" --json >"$W/big-doc.json" || fail "big report --json"
nbad=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); af={n: i for i, n in enumerate(d["attempt_fields"])}; print(sum(1 for a in d["attempts"] if d["states"][a[af["state"]]] != "SUCCEEDED" and a[af["lane"]] >= 0))' "$W/big-doc.json")
probe "$W/big.html" "$W/big" 30000
ms=$(sed -n 's/.*data-render-ms="\([0-9]*\)".*/\1/p' "$W/big.dom")
echo "10,000-task report drawn in $ms ms (the page's own data-render-ms)"
python3 - "$W/big.json" "$nbad" <<'P' || fail "10,000 tasks: $(cut -c1-600 "$W/big.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["bad"] == int(sys.argv[2]) and p["bad"] > 500, (p["bad"], sys.argv[2])
assert p["lanes"] > 16 and p["rows"] >= 16, p
assert p["narrow"] == 0, p["narrow"]
assert p["hidden"] == 0, (p["hidden"], p["examples"])
assert p["bad_label"].startswith("task ") and "attempt " in p["bad_label"], p
assert p["failed_px"] > 1000, p["failed_px"]
assert p["filter"] == "!SUCCEEDED" and len(p["table"]) == 181, p["shown"]
assert "SUCCEEDED" not in p["table"]
P
shoot "$W/big.html" "$ARTEFACTS/report-timeline-10k.png" 1200
box=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["box"]; print(int(b["x"]), int(b["y"]), int(b["x"]+b["width"]), int(b["y"]+b["height"]))' "$W/big.json")
set -- $box
red=$(python3 "$REPO/tests/data/png-count.py" "$ARTEFACTS/report-timeline-10k.png" "$@" $RED)
echo "10,000-task timeline on screen: $red pixels of FAILED"
[ "$red" -gt 1000 ] || fail "failures not visible at 10,000 tasks ($red pixels)"
pass

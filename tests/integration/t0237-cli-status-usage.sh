#!/bin/sh
# t0237-cli-status-usage: the numbers of `vigil status` can be trusted.
# Tasks of 0.0 s have no CPU efficiency ("-" in the EFF column, null in
# the JSON, no cpu part in the usage line) instead of hundreds of
# percent; a task that ran longer has one, never above 100%; the
# right-size line is printed only when it differs materially from the
# request (64M asked and about 2M used suggests 64M: no line; 1G asked
# suggests 64M: a line); the run list counts denied tasks apart from
# failed ones.
set -u
. "$(dirname "$0")/engine-lib.sh"

# mf NAME RESOURCES COMMAND: a three-task sweep.
mf() {
	printf 'version: 1\nname: %s\nmatrix:\n  i: [1, 2, 3]\n' "$1" \
	    >"$W/$1.yaml"
	printf 'resources: %s\ncommand: %s\n' "$2" "$3" >>"$W/$1.yaml"
}

# Short tasks: no efficiency, and 64M is not suggested to who asked 64M.
mf short "{ cpus: 2, memory: 64M }" '"true"'
"$VIGIL" run -q "$W/short.yaml" >/dev/null 2>&1 || fail "short run"
"$VIGIL" status last >"$W/st" 2>&1 || fail "status: $(cat "$W/st")"
expect_eq "EFF of 0.0 s tasks" "- - -" "$(awk '$2 == "SUCCEEDED" \
    { printf "%s%s", s, $8; s = " " }' "$W/st")"
grep -q "^usage: peak memory .* of 64M asked" "$W/st" ||
    fail "usage line: $(cat "$W/st")"
grep -q "^usage: cpu" "$W/st" && fail "cpu efficiency of 0.0 s tasks"
grep -q "^right size" "$W/st" && fail "the request suggested back: \
$(grep '^right size' "$W/st")"
"$VIGIL" status last --json >"$W/js" || fail "status --json"
python3 - "$W/js" <<'PY' || fail "json: $(cat "$W/js")"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(t["usage"]["cpu_eff"] is None for t in d["tasks"]), d["tasks"]
assert d["usage"]["cpu_eff"] is None, d["usage"]
assert d["usage"]["suggestion"] is None, d["usage"]
PY

# A task of more than a second: an efficiency, at most 100%.
mf busy "{ cpus: 1 }" "\"python3 -c 'import time\\nt = time.time() + \
1.3\\nwhile time.time() < t: pass'\""
"$VIGIL" run -q "$W/busy.yaml" >/dev/null 2>&1 || fail "busy run"
"$VIGIL" status last --json >"$W/js" || fail "status --json"
python3 - "$W/js" <<'PY' || fail "busy json: $(cat "$W/js")"
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["tasks"]:
    e = t["usage"]["cpu_eff"]
    assert e is not None and 0 < e <= 1, t
assert 0 < d["usage"]["cpu_eff"] <= 1, d["usage"]
PY
"$VIGIL" status last >"$W/st" 2>&1
awk '$2 == "SUCCEEDED" { sub("%", "", $8); if ($8 + 0 < 1 || $8 + 0 > 100) \
    bad = 1 } END { exit bad }' "$W/st" || fail "EFF column: $(cat "$W/st")"

# 1G asked, a few M used: 64M is a material difference, said.
mf big "{ memory: 1G }" '"true"'
"$VIGIL" run -q "$W/big.yaml" >/dev/null 2>&1 || fail "big run"
"$VIGIL" status last >"$W/st" 2>&1
grep -q "^right size: resources.memory: 64M (peak .* of 1G asked)$" \
    "$W/st" || fail "right size: $(cat "$W/st")"
# The run list counts denied tasks apart from failed ones.
cat >"$W/gate.yaml" <<'Y'
version: 1
name: gate
matrix:
  what: [ok, bad]
command: |
  if [ ${{ matrix.what }} = bad ]; then rm -rf /; fi
  echo fine
Y
"$VIGIL" run -q --mode auto-deny "$W/gate.yaml" </dev/null >/dev/null 2>&1
expect_eq "denied run exit" 3 "$?"
gid=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" status >"$W/list"
head -1 "$W/list" | grep -q "  OK   FAIL   CANC   DENY    RUN  CREATED$" ||
    fail "list header: $(head -1 "$W/list")"
expect_eq "denied: OK FAIL CANC DENY" "0 0 0 2" "$(awk -v id="$gid" \
    '$1 == id { print $5, $6, $7, $8 }' "$W/list")"
pass

#!/bin/sh
# vigil run / status / logs / retry: exit codes, recorded output and exit
# statuses, the JSON schemas, error messages (a did-you-mean for a mistyped
# command or option).
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/mix.yaml" <<'Y'
version: 1
name: mix
matrix:
  code: [0, 3, 5]
command: echo "out ${{ matrix.code }}"; echo "err" >&2; exit ${{ matrix.code }}
Y
"$VIGIL" run --jobs 2 "$W/mix.yaml" >"$W/out" 2>"$W/err"
expect_eq "run exit status" 1 $?
grep -q 'SUCCEEDED exit 0' "$W/err" || fail "no plain progress lines: $(cat "$W/err")"
grep -q '/1 \[code=3\] FAILED exit 3' "$W/err" || fail "no FAILED line"
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" status "$id" --json >"$W/st.json" || fail "status --json"
python3 - "$W/st.json" <<'P' || fail "status JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["name"] == "mix" and d["state"] == "FAILED", d
assert d["counts"]["SUCCEEDED"] == 1 and d["counts"]["FAILED"] == 2
t = d["tasks"]
assert [x["exit_code"] for x in t] == [0, 3, 5], t
assert t[1]["matrix"] == {"code": "3"} and t[1]["attempts"] == 1
assert t[1]["reason"] == "exit status 3", t[1]["reason"]
assert set(t[0]) == {"index", "matrix", "state", "exit_code", "signal",
    "attempts", "started", "ended", "elapsed", "reason", "job_id", "node",
    "gpus", "usage", "outputs", "reuse"}
assert t[0]["reuse"] is None, t[0]
P
expect_eq "logs" "out 3" "$("$VIGIL" logs "$id/1")"
expect_eq "logs --stderr" "err" "$("$VIGIL" logs "$id/1" --stderr)"
"$VIGIL" status "$id" >"$W/table"
grep -Eq '^ +1  FAILED +3 +1 ' "$W/table" || fail "table: $(cat "$W/table")"

# Errors: one clear line each, exit 2.
"$VIGIL" logs "$id/7" 2>"$W/e"; expect_eq "bad task rc" 2 $?
expect_eq "bad task msg" "vigil: run '$id' has no task 7 (it has 3: 0 to 2)" \
    "$(cat "$W/e")"
"$VIGIL" status nosuchrun 2>"$W/e"; expect_eq "unknown run rc" 2 $?
expect_eq "unknown run msg" "vigil: no run 'nosuchrun' (see 'vigil status')" \
    "$(cat "$W/e")"
"$VIGIL" run --jobs 0 "$W/mix.yaml" 2>"$W/e"; expect_eq "jobs 0 rc" 2 $?
head -n1 "$W/e" | grep -q "^vigil: run: --jobs takes a whole number from 1" ||
    fail "jobs msg: $(cat "$W/e")"
"$VIGIL" resume "$id" 2>"$W/e"; expect_eq "resume ended rc" 2 $?
grep -q "already ended (FAILED)" "$W/e" || fail "resume msg: $(cat "$W/e")"

# retry --failed: the failed task runs again (still exit 3) and only it.
"$VIGIL" retry "$id" --failed -q; expect_eq "retry rc" 1 $?
"$VIGIL" status "$id" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["tasks"]
assert [x["attempts"] for x in t] == [1, 2, 2], t' || fail "retry attempts"

# All good: exit 0, --json on stdout only.
cat >"$W/ok.yaml" <<'Y'
version: 1
name: ok
command: ["true"]
Y
"$VIGIL" run -q --json "$W/ok.yaml" >"$W/j"; expect_eq "ok rc" 0 $?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert d["state"]=="SUCCEEDED"' "$W/j" || fail "run --json"

# Dry run: nothing recorded.
n=$("$VIGIL" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
"$VIGIL" run --dry-run "$W/mix.yaml" >"$W/d"; expect_eq "dry rc" 0 $?
grep -q "^3 tasks, 0 denied" "$W/d" || fail "dry: $(cat "$W/d")"
expect_eq "dry records nothing" "$n" "$("$VIGIL" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')"
# A mistyped command or option is answered with the nearest name.
err=$("$VIGIL" statsu 2>&1); expect_eq "statsu rc" 2 $?
expect_eq "statsu" "vigil: unknown command 'statsu'; did you mean 'status'? (try 'vigil help')" "$err"
err=$("$VIGIL" zzzzqq 2>&1); expect_eq "zzzzqq rc" 2 $?
expect_eq "zzzzqq" "vigil: unknown command 'zzzzqq' (try 'vigil help')" "$err"
err=$("$VIGIL" run --jbos 2 "$W/mix.yaml" 2>&1); expect_eq "--jbos rc" 2 $?
expect_eq "--jbos" "vigil: run: unknown option '--jbos'; did you mean '--jobs'?" "$(echo "$err" | head -1)"
err=$("$VIGIL" run --zzzzqq "$W/mix.yaml" 2>&1)
expect_eq "--zzzzqq" "vigil: run: unknown option '--zzzzqq'" "$(echo "$err" | head -1)"
pass

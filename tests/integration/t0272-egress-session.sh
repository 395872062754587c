#!/bin/sh
# isolation.network allow-list in a local session: the egress proxy is
# started by session start and lives as long as the session (one proxy,
# the same process, for every command), each command joins its
# namespace; an allowed host answers, another is refused with the
# proxy's message; every connection is a record in SESSION.egress.jsonl
# next to the session directory, with an owner line naming the job whose
# cgroup made it; a command cannot write that file; session stop stops
# the proxy; vigil session egress and MCP's session_egress sum the
# connections per job and host; examples/sessions/egress.yaml starts; a
# command whose proxy is gone fails.  Needs root (the proxy's namespace), python3
# and curl.
set -u
. "$(dirname "$0")/engine-lib.sh"
[ "$(id -u)" = 0 ] || { echo "the egress proxy needs root"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }
command -v curl >/dev/null || { echo "curl is needed"; exit 77; }

# The server: each request gets "hello" (tests/harness/http-hello.py).
python3 "$(dirname "$0")/../harness/http-hello.py" "$W/port" &
srv=$!
id=
trap '[ -n "$id" ] && "$VIGIL" session stop "$id" >/dev/null 2>&1; kill $srv 2>/dev/null; rm -rf "$W"' EXIT INT TERM
i=0
while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
A=$(cat "$W/port")
F=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$W/s.yaml" <<Y
version: 1
isolation:
  level: standard
  network:
    allow: ["127.0.0.1:$A"]
policy:
  audit_log: $W/audit.jsonl
Y
id=$("$VIGIL" session start -f "$W/s.yaml") || fail "session start"
state=$VIGIL_HOME/sessions/$id.egress
log=$VIGIL_HOME/sessions/$id.egress.jsonl
[ -s "$state" ] || fail "no proxy state after start"
pid=$(cut -d' ' -f1 "$state")
# Alive: there, and not a zombie (a PID 1 that does not reap leaves one).
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }
alive "$pid" || fail "the proxy is not running"

x() { "$VIGIL" exec --session "$id" -- "$@" </dev/null; }

out=$(x "curl -sS --max-time 10 --noproxy '' -x \"\$HTTP_PROXY\" http://127.0.0.1:$A/one") ||
    fail "allowed fetch: $out"
expect_eq "allowed fetch" "hello" "$out"
out=$(x "curl -sS --max-time 10 --noproxy '' -x \"\$HTTP_PROXY\" http://127.0.0.1:$F/two; echo \" rc=\$?\"")
expect_eq "refused fetch" "vigil egress proxy: 127.0.0.1:$F refused (not listed): isolation.network does not allow it
 rc=0" "$out"
# No way around the proxy: the namespace has only loopback.
out=$(x "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:$A/raw >/dev/null 2>&1; echo rc=\$?")
expect_eq "direct fetch" "rc=7" "$out"
# The log is out of the commands' reach.
x "echo forged >>$log" 2>/dev/null
grep -q forged "$log" && fail "a command wrote the session's egress log"
expect_eq "same proxy after three commands" "$pid" "$(cut -d' ' -f1 "$state")"
alive "$pid" || fail "the proxy died between commands"

# vigil session egress: the connections summed per job and host.
out=$("$VIGIL" session egress "$id") || fail "session egress: $out"
echo "$out" | grep -q '^egress: 2 connections, 1 refused, 0 failed, ' ||
    fail "session egress head: $out"
echo "$out" | grep -Eq "^  job 1 +reached +127\.0\.0\.1:$A +1 connection, [0-9]+ bytes up, [0-9]+ down\$" ||
    fail "session egress, job 1: $out"
echo "$out" | grep -Eq "^  job 2 +refused +127\.0\.0\.1:$F +1 connection \(not listed\)\$" ||
    fail "session egress, job 2: $out"
"$VIGIL" session egress "$id" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["connections"] == 2 and d["refused"] == 1, d
h = {(x["job"], x["outcome"]) for x in d["hosts"]}
assert h == {(1, "reached"), (2, "refused")}, d
' || fail "session egress --json"
"$VIGIL" session egress nosuchsession >/dev/null 2>"$W/err" &&
    fail "session egress of no session succeeded"
grep -q "nosuchsession" "$W/err" || fail "session egress of no session: $(cat "$W/err")"

"$VIGIL" session stop "$id" >/dev/null || fail "session stop"
sid=$id
id=
i=0
while alive "$pid" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
alive "$pid" && fail "the proxy outlived its session"
[ -e "$state" ] && fail "the proxy state outlived its session"

# Records: the allowed connection of job 1 (20 bytes up: the request
# curl sends differs by version, so only down is exact), the refusal of
# job 2, each named by its owner line.
python3 - "$log" "$A" "$F" <<'PY' || fail "records: $(cat "$log")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
A, F = int(sys.argv[2]), int(sys.argv[3])
owners = {l["owner"]: l["job"] for l in lines if "owner" in l}
recs = [l for l in lines if "proto" in l]
assert len(recs) == 2, recs
ok = [r for r in recs if r["allowed"]]
no = [r for r in recs if not r["allowed"]]
assert len(ok) == 1 and len(no) == 1, recs
assert (ok[0]["host"], ok[0]["port"], ok[0]["down"]) == ("127.0.0.1", A, 44), ok
assert ok[0]["up"] > 0 and ok[0]["rule"] == "allow 127.0.0.1:%d" % A, ok
assert (no[0]["port"], no[0]["rule"]) == (F, "not listed"), no
assert owners.get(ok[0]["cgroup"]) == 1, (owners, ok)
assert owners.get(no[0]["cgroup"]) == 2, (owners, no)
PY
# The audit: each connection once (audited after each command and at
# stop), as the session's, with the job that made it; in the store and
# in the audit file.
expect_eq "audit rows" "allow|http 127.0.0.1:$A|job 1: 
deny|http 127.0.0.1:$F|job 2: refused by the egress proxy" \
    "$(sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" "SELECT verdict,
    command, CASE verdict WHEN 'allow' THEN substr(reason, 1, 7) ELSE reason
    END FROM audit WHERE mode = 'egress' AND run_id = '$sid' ORDER BY id")"
expect_eq "audit file lines" "allow http 127.0.0.1:$A|deny http 127.0.0.1:$F" \
    "$(python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])]
print("|".join("%s %s" % (x["verdict"], x["command"]) for x in r if x["mode"] == "egress"))' "$W/audit.jsonl")"

# An agent over MCP: the server's session takes the allow-list of the
# user configuration; session_egress gives its connections once exec
# has answered.
printf 'isolation:\n  network:\n    allow: ["127.0.0.1:%s"]\n' "$A" >"$W/user.yaml"
replies() { grep -c '' "$W/mcp.out"; }
upto() { _t=0; while [ "$(replies)" -lt "$1" ] && [ $_t -lt 300 ]; do
	sleep 0.1; _t=$((_t + 1)); done; }
: >"$W/mcp.out"
{ echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"curl -sS --noproxy \"\" -x $HTTP_PROXY http://127.0.0.1:'"$A"'/m; curl -sS --noproxy \"\" -x $HTTP_PROXY http://127.0.0.1:'"$F"'/n"}}}'
  upto 2
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"session_egress","arguments":{}}}'
  upto 3; } |
    VIGIL_USER_CONFIG=$W/user.yaml timeout 60 "$VIGIL" mcp --mode auto-approve \
    >"$W/mcp.out" 2>"$W/mcp.err" || fail "vigil mcp: $(cat "$W/mcp.err")"
python3 - "$W/mcp.out" "$A" "$F" <<'PY' || fail "MCP session_egress: $(cat "$W/mcp.out")"
import json, sys
A, F = sys.argv[2], sys.argv[3]
r = {m.get("id"): m for m in map(json.loads, open(sys.argv[1]))}
e = r[3]["result"]["structuredContent"]["egress"]
assert r[3]["result"]["isError"] is False, r[3]
assert (e["connections"], e["refused"]) == (2, 1), e
got = {(h["job"], h["host"], h["outcome"]) for h in e["hosts"]}
assert got == {(1, "127.0.0.1:" + A, "reached"),
               (1, "127.0.0.1:" + F, "refused")}, got
PY
for s in $("$VIGIL" session list --json | python3 -c 'import json, sys
print(" ".join(x["id"] for x in json.load(sys.stdin) if x["state"] == "active"))'); do
	"$VIGIL" session stop "$s" >/dev/null
done

# The example session manifest starts (its proxy) and stops.
top=$(cd "$(dirname "$0")/../.." && pwd)
id=$("$VIGIL" session start -f "$top/examples/sessions/egress.yaml") ||
    fail "the example session did not start"
[ -s "$VIGIL_HOME/sessions/$id.egress" ] || fail "the example has no proxy"
# A proxy gone (killed) fails the next command, not runs it without.
pid=$(cut -d' ' -f1 "$VIGIL_HOME/sessions/$id.egress")
kill -9 "$pid"
i=0
while alive "$pid" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
out=$("$VIGIL" exec --session "$id" -- 'echo ran' </dev/null 2>&1)
expect_eq "exec without its proxy" 1 "$(printf '%s\n' "$out" |
    grep -c "the session's egress proxy (pid $pid) is gone")"
printf '%s\n' "$out" | grep -q '^ran$' && fail "a command ran without its proxy"
"$VIGIL" session stop "$id" >/dev/null || fail "example session stop"
[ -e "$VIGIL_HOME/sessions/$id.egress" ] && fail "state left after stop"
id=
pass

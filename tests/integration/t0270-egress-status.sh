#!/bin/sh
# isolation.network allow-list: what the egress proxy saw is in the run's
# events, per task, with exact bytes, and shown by vigil status RUN,
# status RUN/TASK, status --json, the report (JSON and HTML) and the
# --cron summary; each connection is in the audit file too.  Two tasks
# speak raw HTTP through the proxy to a server on the host's loopback
# that answers a known number of bytes; one also asks for a host the
# list does not name.  Needs root (the proxy's namespace) and python3.
set -u
. "$(dirname "$0")/engine-lib.sh"
[ "$(id -u)" = 0 ] || { echo "the egress proxy needs root"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }

h=$(cd "$(dirname "$0")/../harness" && pwd)
# The server: each request gets "hello" (tests/harness/http-hello.py).
trap 'kill $(cat "$W/srv.pid" 2>/dev/null) 2>/dev/null; rm -rf "$W"' EXIT INT TERM
A=$("$h/http-hello-up" "$W/port" "$W/srv.pid") || fail "no server"
# A port nothing listens on, and the list does not name.
F=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

mkdir "$W/wd" && cd "$W/wd" || fail "no work dir"
# get REQUEST: one request through the proxy, as a client of HTTP_PROXY
# writes it (tests/harness/proxy-get.py).
cp "$h/proxy-get.py" get.py
cat >e.yaml <<Y
version: 1
name: eg
workdir: $W/wd
matrix:
  n: [0, 1]
isolation:
  level: standard
  readable: [$W/wd]
  network:
    allow: ["127.0.0.1:$A"]
policy:
  audit_log: $W/audit.jsonl
command: |
  if [ \${{ matrix.n }} = 0 ]; then
    python3 get.py 'GET http://127.0.0.1:$A/aa HTTP/1.0\r\n\r\n'
    python3 get.py 'GET http://127.0.0.1:$A/bbbb HTTP/1.0\r\nProxy-Authorization: x\r\n\r\n'
  else
    python3 get.py 'GET http://127.0.0.1:$A/c HTTP/1.0\r\n\r\n'
    python3 get.py 'CONNECT 127.0.0.1:$F HTTP/1.1\r\n\r\n'
  fi
Y
"$VIGIL" run -q e.yaml 2>"$W/err" || fail "run: $(cat "$W/err")"
run=$(last_run)
expect_eq "task 0 output" "HTTP/1.0 200 OK
HTTP/1.0 200 OK" "$(cat "$VIGIL_HOME/runs/$run/tasks/0/stdout")"
expect_eq "task 1 output" "HTTP/1.0 200 OK
HTTP/1.1 403 Forbidden" "$(cat "$VIGIL_HOME/runs/$run/tasks/1/stdout")"
grep -q "egress: the proxy refused 1 connection (the first: 127.0.0.1:$F)" \
    "$W/err" || fail "no warning of the refusal: $(cat "$W/err")"

# Up: "GET /aa HTTP/1.0\r\n\r\n" is 20 bytes, /bbbb 22 (the Proxy-
# header dropped), /c 19; down: the answer, 44 bytes each.
"$VIGIL" status "$run" >"$W/st" || fail "status"
sed -n '/^egress:/,/^$/p' "$W/st" >"$W/eg"
expect_eq "status RUN egress" "egress: 4 connections, 1 refused, 0 failed, 61 bytes up, 132 down
  task 0    reached  127.0.0.1:$A  2 connections, 42 bytes up, 88 down
  task 1    reached  127.0.0.1:$A  1 connection, 19 bytes up, 44 down
  task 1    refused  127.0.0.1:$F  1 connection (not listed)" "$(cat "$W/eg")"
"$VIGIL" status "$run/1" >"$W/st1" || fail "status RUN/1"
expect_eq "status RUN/1 egress" "egress: 2 connections, 1 refused, 0 failed, 19 bytes up, 44 down
  task 1    reached  127.0.0.1:$A  1 connection, 19 bytes up, 44 down
  task 1    refused  127.0.0.1:$F  1 connection (not listed)" \
    "$(sed -n '/^egress:/,/^$/p' "$W/st1")"
# Each connection is an event of its task.
expect_eq "task 1 egress events" 2 "$(grep -c ' egress: {' "$W/st1")"

# JSON: the same sums.
expect_eq "status --json egress" \
    "4 1 61 132 [(0, 'reached', '127.0.0.1:$A', 2, 42, 88, None), (1, 'reached', '127.0.0.1:$A', 1, 19, 44, None), (1, 'refused', '127.0.0.1:$F', 1, 0, 0, 'not listed')]" \
    "$(jq_run "$run" '"%d %d %d %d %s" % (d["egress"]["connections"], d["egress"]["refused"], d["egress"]["up"], d["egress"]["down"], [(h["task"], h["outcome"], h["host"], h["connections"], h["up"], h["down"], h["why"]) for h in d["egress"]["hosts"]])')"

# The report: its data and its page.
"$VIGIL" report "$run" --json >"$W/rep.json" || fail "report --json"
expect_eq "report egress" "4 1 3" "$(python3 -c 'import json,sys
e = json.load(open(sys.argv[1]))["egress"]
print(e["connections"], e["refused"], len(e["hosts"]))' "$W/rep.json")"
"$VIGIL" report "$run" -o "$W/rep.html" || fail "report"
grep -q '<h2>Network egress</h2>' "$W/rep.html" || fail "no egress section"
grep -q "\"host\":\"127.0.0.1:$F\"" "$W/rep.html" || fail "no egress data"
# The policy decisions are the gate's: no connection among them.
expect_eq "report policy counts" "2 0" "$(python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))["policy"]["counts"]
print(p["allow"], p["deny"])' "$W/rep.json")"

# The audit file: the gate's two decisions, then the four connections.
expect_eq "audit egress lines" \
    "allow http 127.0.0.1:$A 0|allow http 127.0.0.1:$A 0|allow http 127.0.0.1:$A 1|deny connect 127.0.0.1:$F 1" \
    "$(python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])]
e = sorted((x["verdict"], x["command"], x["task"]) for x in r if x["mode"] == "egress")
print("|".join("%s %s %d" % x for x in e))' "$W/audit.jsonl")"

# --cron: silent when all is well, but a refused connection is listed.
"$VIGIL" run --cron e.yaml >"$W/cron.out" 2>"$W/cron.err"
expect_eq "cron exit" 0 $?
grep -q "1 connection refused by the egress proxy:" "$W/cron.err" ||
    fail "cron summary: $(cat "$W/cron.err")"
grep -q "^    task 1: 127.0.0.1:$F (not listed), 1 connection$" "$W/cron.err" ||
    fail "cron refused line: $(cat "$W/cron.err")"
pass

#!/bin/sh
# isolation.network allow-list on a cluster scheduler (a Grid Engine
# cell): each task's task-exec starts an egress proxy of its own on its
# node; the driver takes the records each left under RUN/egress when it
# learns the attempt ended, so vigil status shows each task's
# connections, exact bytes and refusals, as for a local run, the audit
# has them, RUN/egress.jsonl has them for people, and RUN/egress is
# gone.  Needs root (the proxy's namespace) and python3.
set -u
. "$(dirname "$0")/gridengine-lib.sh"
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }

trap 'kill $(cat "$W/srv.pid" 2>/dev/null) 2>/dev/null; cleanup' EXIT
A=$("$harness/http-hello-up" "$W/port" "$W/srv.pid") || fail "no server"
F=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cp "$harness/proxy-get.py" "$W/get.py"
ge_yaml "$W/e.yaml" egress 2 "|
  python3 $W/get.py 'GET http://127.0.0.1:$A/\${{ matrix.i }} HTTP/1.0\r\n\r\n'
  if [ \${{ matrix.i }} = 1 ]; then
    python3 $W/get.py 'CONNECT 127.0.0.1:$F HTTP/1.1\r\n\r\n'
  fi" \
    "isolation:
  readable: [\"$W\"]
  network:
    allow: [\"127.0.0.1:$A\"]
policy:
  audit_log: $W/audit.jsonl"
"$VIGIL" run -q "$W/e.yaml" >"$W/out" 2>"$W/err"
expect_eq "exit status: $(cat "$W/out" "$W/err")" 0 $?
id=$(last_run)
dir=$VIGIL_HOME/runs/$id
expect_eq "task 1 output" "HTTP/1.0 200 OK
HTTP/1.1 403 Forbidden" "$(cat "$dir/tasks/1/stdout")"
# "GET /0 HTTP/1.0\r\n\r\n": 19 bytes up; the answer 44 down.
"$VIGIL" status "$id" >"$W/st" || fail "status"
expect_eq "status egress" "egress: 3 connections, 1 refused, 0 failed, 38 bytes up, 88 down
  task 0    reached  127.0.0.1:$A  1 connection, 19 bytes up, 44 down
  task 1    reached  127.0.0.1:$A  1 connection, 19 bytes up, 44 down
  task 1    refused  127.0.0.1:$F  1 connection (not listed)" \
    "$(sed -n '/^egress:/,/^$/p' "$W/st")"
expect_eq "audit file" "allow http 127.0.0.1:$A 0|allow http 127.0.0.1:$A 1|deny connect 127.0.0.1:$F 1" \
    "$(python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])]
e = sorted((x["verdict"], x["command"], x["task"]) for x in r if x["mode"] == "egress")
print("|".join("%s %s %d" % x for x in e))' "$W/audit.jsonl")"
expect_eq "records for people" 3 "$(grep -c '"proto"' "$dir/egress.jsonl")"
[ -e "$dir/egress" ] && fail "RUN/egress left: $(ls -R "$dir/egress")"
pass

#!/bin/sh
# isolation.network allow-list for a task a cluster scheduler runs:
# vigil task-exec (as a job runs it on a node, here outside any
# scheduler) starts an egress proxy of the attempt's own on this host,
# the task reaches the listed host through it and is refused another,
# and the records land in RUN/egress/INDEX.ATTEMPT/egress.jsonl for the
# driver (t0769 takes them into the store through a Grid Engine cell).
# Needs root (the proxy's namespace) and python3.
set -u
. "$(dirname "$0")/engine-lib.sh"
[ "$(id -u)" = 0 ] || { echo "the egress proxy needs root"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }

h=$(cd "$(dirname "$0")/../harness" && pwd)
trap 'kill $(cat "$W/srv.pid" 2>/dev/null) 2>/dev/null; rm -rf "$W"' EXIT INT TERM
A=$("$h/http-hello-up" "$W/port" "$W/srv.pid") || fail "no server"
F=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir "$W/wd" && cd "$W/wd" || fail "no work dir"
cp "$h/proxy-get.py" get.py
cat >e.yaml <<Y
version: 1
name: eg-node
workdir: $W/wd
isolation:
  level: standard
  readable: [$W/wd]
  network:
    allow: ["127.0.0.1:$A"]
command: |
  python3 get.py 'GET http://127.0.0.1:$A/aa HTTP/1.0\r\n\r\n'
  python3 get.py 'CONNECT 127.0.0.1:$F HTTP/1.1\r\n\r\n'
Y
"$VIGIL" run -q e.yaml 2>"$W/err" || fail "run: $(cat "$W/err")"
run=$(last_run)
dir=$VIGIL_HOME/runs/$run
sum=$(run_digest "$dir")
rm -f "$dir/tasks/0/result.json" "$dir/tasks/0/stdout"
VIGIL_ATTEMPT=2 "$VIGIL" task-exec --manifest-sha256 "$sum" "$dir" 0 \
    >"$W/te.out" 2>&1
expect_eq "task-exec exit ($(cat "$W/te.out"))" 0 $?
expect_eq "the task's view" "HTTP/1.0 200 OK
HTTP/1.1 403 Forbidden" "$(cat "$dir/tasks/0/stdout")"
log=$dir/egress/0.2/egress.jsonl
[ -f "$log" ] || fail "no node log: $(ls -R "$dir" | head -30)"
python3 - "$log" "$A" "$F" <<'PY' || fail "node records: $(cat "$log")"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
A, F = int(sys.argv[2]), int(sys.argv[3])
assert len(r) == 2, r
ok = [x for x in r if x["allowed"]][0]
no = [x for x in r if not x["allowed"]][0]
assert (ok["port"], ok["up"], ok["down"], ok["task"], ok["attempt"]) == (A, 20, 44, 0, 2), ok
assert (no["port"], no["rule"]) == (F, "not listed"), no
PY
pass

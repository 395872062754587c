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

python3 "$(dirname "$0")/../harness/http-hello.py" "$W/port" &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$W"' EXIT INT TERM
i=0
while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
A=$(cat "$W/port")
F=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir "$W/wd" && cd "$W/wd" || fail "no work dir"
cat >get.py <<'PY'
import os, socket, sys
p = os.environ["HTTP_PROXY"].rsplit(":", 1)[1]
s = socket.create_connection(("127.0.0.1", int(p)))
s.sendall(sys.argv[1].encode().decode("unicode_escape").encode())
b = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    b += d
print(b.split(b"\r\n")[0].decode())
PY
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

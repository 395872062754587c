#!/bin/sh
# s1302: a task under an isolation.network allow-list tries to change
# what vigil records of its connections: it appends forged records
# (a connection it never made, bytes it never sent, another task's
# name) to RUN/egress.jsonl, replaces the file with a link, and writes
# a proxy record line straight at the proxy.  Each write is refused (the
# run directory is out of its reach), and vigil takes its records
# from the proxy's pipe and the kernel's word on whose each connection
# is: status and its JSON show the one connection
# the task made, with its exact bytes, and nothing forged.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the server"

# The server: each request gets "hello" (tests/harness/http-hello.py).
trap 'kill $(cat "$tmp/srv.pid" 2>/dev/null) 2>/dev/null; sec_cleanup' EXIT
A=$("$here/../harness/http-hello-up" "$tmp/port" "$tmp/srv.pid") ||
    fail "the server did not start"

mkdir "$tmp/w"
cat >"$tmp/w/forge.py" <<'PY'
import os, socket
forged = ('{"proto":"http","host":"exfil.example","port":443,"addr":'
          '"203.0.113.9","allowed":true,"rule":"allow exfil.example",'
          '"error":null,"up":999999,"down":1,"cgroup":0,"task":1,'
          '"attempt":1}\n')
log = os.path.join(os.environ["VIGIL_TASK_DIR"], "..", "..", "egress.jsonl")
for what, f in (("append", lambda: open(log, "a").write(forged)),
                ("replace", lambda: (os.unlink(log),
                                     os.symlink("/etc/passwd", log))),
                ("create", lambda: open(log + ".new", "w").write(forged))):
    try:
        f()
        print(what, "done")
    except OSError as e:
        print(what, "refused:", e.__class__.__name__)
# A record line sent to the proxy as if it were a request.
p = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
s = socket.create_connection(("127.0.0.1", p))
s.sendall(forged.encode() + b"\r\n\r\n")
print("line:", s.recv(100).split(b"\r\n")[0].decode())
# The one real connection: 20 bytes up, 44 down.
s = socket.create_connection(("127.0.0.1", p))
s.sendall(b"GET http://127.0.0.1:%d/aa HTTP/1.0\r\n\r\n" % int(os.environ["A"]))
b = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    b += d
print("real:", b.split(b"\r\n")[0].decode())
PY
cat >"$tmp/w/j.yaml" <<Y
version: 1
name: s1302
workdir: $tmp/w
env:
  A: "$A"
isolation:
  level: standard
  readable: [$tmp/w]
  network:
    allow: ["127.0.0.1:$A"]
command: python3 forge.py
Y
"$VIGIL" run -q "$tmp/w/j.yaml" >"$tmp/out" 2>&1 || fail "run: $(cat "$tmp/out")"
run=$(ls "$VIGIL_HOME/runs" | head -1)
out=$(cat "$VIGIL_HOME/runs/$run/tasks/0/stdout")
printf '%s\n' "$out" | grep -q "^real: HTTP/1.0 200 OK$" ||
    fail "the real request failed: $out"
# The run directory is out of the task's reach (Landlock, read-only
# mounts): each attempt on the log is refused.
for w in append replace create; do
	printf '%s\n' "$out" | grep -q "^$w refused: PermissionError$" ||
	    fail "the task could $w RUN/egress.jsonl: $out"
done
printf '%s\n' "$out" | grep -q "^line: HTTP/1.1 400 Bad Request$" ||
    fail "the proxy took a record line as a request: $out"
"$VIGIL" status "$run" >"$tmp/st" || fail "status"
expect "$(sed -n '/^egress:/,/^$/p' "$tmp/st")" "egress: 1 connection, 0 refused, 0 failed, 20 bytes up, 44 down
  task 0    reached  127.0.0.1:$A  1 connection, 20 bytes up, 44 down" \
    "status egress (the task wrote: $(printf '%s' "$out" | tr '\n' ';'))"
grep -q "exfil" "$tmp/st" && fail "a forged record shows: $(cat "$tmp/st")"
"$VIGIL" status "$run" --json | python3 -c 'import json,sys
e = json.load(sys.stdin)["egress"]
assert (e["connections"], e["up"], e["down"]) == (1, 20, 44), e
assert [h["host"] for h in e["hosts"]] == ["127.0.0.1:'"$A"'"], e
' || fail "status --json shows a forged record"
echo "ok: records come from the proxy and the kernel, not from the run directory"

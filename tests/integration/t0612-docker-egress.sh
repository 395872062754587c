#!/bin/sh
# isolation.network allow-list with the docker backend on podman's Docker
# API (as root): each container joins the egress proxy's network
# namespace (NetworkMode ns:PATH), so a task reaches a listed host on the
# host's loopback only through the proxy (its variables in the
# container's Env), is refused an unlisted one with a 403, and finds no
# route around it; each connection is recorded and named to its task
# (the kernel's cgroup of the client socket, whose path holds the
# container id vigil announced before the container started).
# docker.network beside an allow-list, and an allow-list in a session,
# are refused.
. "$(dirname "$0")/docker-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: the network namespace needs root"; exit 77; }
cleanup_extra='kill $(cat "$tmp/a.pid" "$tmp/b.pid" 2>/dev/null) 2>/dev/null'
A=$("$top/tests/harness/http-hello-up" "$tmp/a" "$tmp/a.pid") &&
    B=$("$top/tests/harness/http-hello-up" "$tmp/b" "$tmp/b.pid") ||
    { echo "FAIL: the servers did not start"; exit 1; }

cat >"$tmp/e.yaml" <<Y
version: 1
name: docker-egress
backend: docker
image: localhost/vigil-test:latest
matrix:
  n: [0, 1]
isolation:
  network:
    allow: ["127.0.0.1:$A"]
command: |
  p=\${HTTP_PROXY##*:}
  printf 'GET http://127.0.0.1:$A/\${{ matrix.n }} HTTP/1.0\r\n\r\n' | nc 127.0.0.1 \$p | head -n 1
  if [ \${{ matrix.n }} = 1 ]; then
    printf 'CONNECT 127.0.0.1:$B HTTP/1.1\r\n\r\n' | nc 127.0.0.1 \$p | head -n 1
  fi
  if printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 127.0.0.1 $B 2>/dev/null | grep -q hello; then
    echo direct reached
  else
    echo direct refused
  fi
Y
"$VIGIL" run -q "$tmp/e.yaml" >"$tmp/run.out" 2>"$tmp/run.err"
check "run exit" "$?" 0
run=$("$VIGIL" status --json last | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "task 0 output" "$("$VIGIL" logs "$run/0" | tr -d '\r')" "HTTP/1.0 200 OK
direct refused"
check "task 1 output" "$("$VIGIL" logs "$run/1" | tr -d '\r')" "HTTP/1.0 200 OK
HTTP/1.1 403 Forbidden
direct refused"
# "GET /0 HTTP/1.0\r\n\r\n" is 19 bytes up; the answer 44 down.
"$VIGIL" status "$run" >"$tmp/st" || fail=1
check "status egress (named to each task)" \
    "$(sed -n '/^egress:/,/^$/p' "$tmp/st")" "egress: 3 connections, 1 refused, 0 failed, 38 bytes up, 88 down
  task 0    reached  127.0.0.1:$A  1 connection, 19 bytes up, 44 down
  task 1    reached  127.0.0.1:$A  1 connection, 19 bytes up, 44 down
  task 1    refused  127.0.0.1:$B  1 connection (not listed)"
grep -q "egress: the proxy refused 1 connection (the first: 127.0.0.1:$B)" \
    "$tmp/run.err" || { echo "FAIL: no refusal warning: $(cat "$tmp/run.err")"; fail=1; }
check "containers removed" "$(vigil_containers)" ""

# docker.network beside an allow-list: refused at validate.
sed 's/^isolation:/docker:\n  network: bridge\nisolation:/' "$tmp/e.yaml" >"$tmp/n.yaml"
"$VIGIL" validate "$tmp/n.yaml" >"$tmp/v.out" 2>&1 && fail=1
grep -q "n.yaml:[0-9]*:[0-9]*: error: docker.network 'bridge' with an isolation.network allow-list" \
    "$tmp/v.out" || { echo "FAIL: docker.network refusal: $(cat "$tmp/v.out")"; fail=1; }
# A session's container is not the run's: refused.
cat >"$tmp/s.yaml" <<Y
backend: docker
image: localhost/vigil-test:latest
isolation:
  network:
    allow: ["127.0.0.1:$A"]
Y
"$VIGIL" session start -f "$tmp/s.yaml" >"$tmp/s.out" 2>&1 && fail=1
grep -q "isolation.network 'allow' is enforced by backend 'docker' in runs, not in sessions" \
    "$tmp/s.out" || { echo "FAIL: session refusal: $(cat "$tmp/s.out")"; fail=1; }
[ $fail -eq 0 ] || exit 1
echo "all passed"

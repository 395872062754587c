#!/bin/sh
# isolation.network with the singularity backend and the real apptainer
# (as root): an allow-list starts apptainer in the egress proxy's network
# namespace, so a task in the SIF reaches a listed host on the host's
# loopback only through the proxy (its variables in the container's
# environment), is refused an unlisted one with a 403, and finds no
# route around it (raw TCP to the host's loopback server); each
# connection is recorded and named to its task.  none: a namespace of
# the task's own with only loopback, up.  apptainer's own network flags
# are refused with an allow-list, and sessions refuse both modes.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: the network namespace needs root"; exit 77; }
trap 'kill $(cat "$tmp/a.pid" "$tmp/b.pid" 2>/dev/null) 2>/dev/null; rm -rf "$tmp"' EXIT
A=$("$top/tests/harness/http-hello-up" "$tmp/a" "$tmp/a.pid") &&
    B=$("$top/tests/harness/http-hello-up" "$tmp/b" "$tmp/b.pid") ||
    fail "the servers did not start"

# Through the proxy as a client of HTTP_PROXY writes it (busybox nc to
# the port the variable names); then straight at the host's server.
cat >"$tmp/eg.sh" <<SH
p=\${HTTP_PROXY##*:}
printf 'GET http://127.0.0.1:$A/aa HTTP/1.0\r\n\r\n' | busybox nc 127.0.0.1 \$p | head -n 1
printf 'CONNECT 127.0.0.1:$B HTTP/1.1\r\n\r\n' | busybox nc 127.0.0.1 \$p | head -n 1
if printf 'GET / HTTP/1.0\r\n\r\n' | busybox nc -w 2 127.0.0.1 $B 2>/dev/null | grep -q hello; then
	echo direct reached
else
	echo direct refused
fi
SH
m=$(mf allow "'sh $tmp/eg.sh'" \
    "isolation:" "  network:" "    allow: [\"127.0.0.1:$A\"]" \
    "singularity:" "  binary: $APPTAINER_WRAP" "  binds: [\"$tmp:$tmp:ro\"]")
vrun "$m"
expect "$vrc" 0 "allow-list run: $(cat "$tmp/run.err")"
expect "$("$VIGIL" logs "$rid/0" | tr -d '\r')" "HTTP/1.0 200 OK
HTTP/1.1 403 Forbidden
direct refused" "the task's view"
"$VIGIL" status "$rid" >"$tmp/st" || fail "status"
expect "$(sed -n '/^egress:/,/^$/p' "$tmp/st")" "egress: 2 connections, 1 refused, 0 failed, 20 bytes up, 44 down
  task 0    reached  127.0.0.1:$A  1 connection, 20 bytes up, 44 down
  task 0    refused  127.0.0.1:$B  1 connection (not listed)" \
    "status egress (named to its task)"
grep -q "egress: the proxy refused 1 connection (the first: 127.0.0.1:$B)" \
    "$tmp/run.err" || fail "no warning of the refusal: $(cat "$tmp/run.err")"

# none: loopback only, up; the host's server unreachable.
m=$(mf none "'cat /proc/net/dev | sed 1,2d | cut -d: -f1 | tr -d \" \"; busybox nc -w 2 127.0.0.1 $A </dev/null && echo reached || echo refused; busybox ip link show lo | grep -c UP'" \
    "isolation:" "  network: none")
vrun "$m"
expect "$vrc" 0 "none run: $(cat "$tmp/run.err")"
expect "$("$VIGIL" logs "$rid/0")" "lo
refused
1" "none: the task's interfaces"
# The same attempt as a cluster's job runs it (vigil task-exec on a
# node): the backend's drive is made there too.
dir=$VIGIL_HOME/runs/$rid
sum=$("$PY" -c 'import hashlib,sys
d=open(sys.argv[1],"rb").read()+b"\0"+open(sys.argv[2],"rb").read()
print(hashlib.sha256(d).hexdigest())' "$dir/manifest.json" "$dir/origin.json")
rm -f "$dir/tasks/0/stdout" "$dir/tasks/0/result.json"
VIGIL_ATTEMPT=2 "$VIGIL" task-exec --manifest-sha256 "$sum" "$dir" 0 \
    >"$tmp/te.out" 2>&1 || fail "task-exec: $(cat "$tmp/te.out")"
expect "$(cat "$dir/tasks/0/stdout")" "lo
refused
1" "none under task-exec"

# apptainer's own network flags with an allow-list: refused at validate.
m=$(mf flags "'true'" \
    "isolation:" "  network:" "    allow: [example.org]" \
    "singularity:" "  binary: $APPTAINER_WRAP" "  flags: [--net]")
"$VIGIL" validate "$m" >"$tmp/v.out" 2>&1 && fail "--net accepted"
grep -q "flags.yaml:[0-9]*:[0-9]*: error: singularity.flags: '--net' is not allowed with isolation.network 'allow'" \
    "$tmp/v.out" || fail "--net refusal: $(cat "$tmp/v.out")"
# Sessions keep apptainer's instance in the host's network: refused.
m=$(mf sess "'true'" "isolation:" "  network: none")
"$VIGIL" session start -f "$m" >"$tmp/s.out" 2>&1 && fail "session accepted"
grep -q "isolation.network 'none' is enforced by backend 'singularity' in runs, not in sessions" \
    "$tmp/s.out" || fail "session refusal: $(cat "$tmp/s.out")"
echo "all passed"

#!/bin/sh
# s1301: a task under an isolation.network allow-list tries every way
# out.  Two HTTP servers on the host's loopback stand in for an allowed
# and a forbidden host, a UDP listener for anything else.  Through the
# proxy (HTTP, CONNECT, SOCKS5) the allowed server answers and the
# forbidden one is refused with a message naming it; around the proxy
# (raw TCP to either, UDP, DNS to an outside resolver, IPv6 literals)
# nothing gets out, and the UDP listener sees nothing.  Loopback inside
# the task works.  Every proxied connection is in RUN/egress.jsonl.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the servers"
command -v curl >/dev/null || skip "curl is needed for the task"

# Servers: port files written once listening.
pids=""
for k in allowed forbidden udp; do
	python3 "$here/../harness/http-kind.py" $k 127.0.0.1 "$tmp/$k.port" \
	    "$tmp/$k.log" &
	pids="$pids $!"
done
trap 'kill $pids 2>/dev/null; sec_cleanup' EXIT
for k in allowed forbidden udp; do
	i=0
	while [ ! -s "$tmp/$k.port" ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ -s "$tmp/$k.port" ] || fail "the $k server did not start"
done
A=$(cat "$tmp/allowed.port") F=$(cat "$tmp/forbidden.port") U=$(cat "$tmp/udp.port")
: >"$tmp/allowed.log"; : >"$tmp/forbidden.log"; : >"$tmp/udp.log"

mkdir "$tmp/w"
cat >"$tmp/w/probe.py" <<'PY'
import socket, sys
what, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
try:
    if what == "tcp":
        s = socket.create_connection((host, port), timeout=3)
        s.sendall(b"GET /raw HTTP/1.0\r\n\r\n")
        print("tcp-open", s.recv(100))
    elif what == "udp":
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.sendto(b"x" * 32, (host, port))
        print("udp-sent")
    elif what == "dns":
        print("resolved", socket.gethostbyname(host))
except OSError as e:
    print(what, "refused:", e.__class__.__name__)
PY
for level in standard strict; do
	cat >"$tmp/w/j.yaml" <<Y
version: 1
name: s1301-$level
workdir: $tmp/w
isolation:
  level: $level
  readable: [$tmp/w]
  network:
    allow: ["127.0.0.1:$A", localhost]
    deny: ["localhost:$F"]
command: |
  P=\${HTTP_PROXY##*:}
  c() { curl -sS --max-time 10 --noproxy '' "\$@"; echo " rc=\$?"; }
  echo "== http allowed"; c -x "\$HTTP_PROXY" http://127.0.0.1:$A/via-http
  echo "== connect allowed"; c -p -x "\$HTTP_PROXY" http://127.0.0.1:$A/via-connect
  echo "== socks allowed"; c -x "\$ALL_PROXY" http://localhost:$A/via-socks
  echo "== http forbidden"; c -x "\$HTTP_PROXY" http://127.0.0.1:$F/via-http
  echo "== socks forbidden"; c -x "\$ALL_PROXY" http://127.0.0.1:$F/via-socks
  echo "== socks denied name"; c -x "\$ALL_PROXY" http://localhost:$F/via-socks-name
  echo "== socks ipv6"; c -g -x "\$ALL_PROXY" "http://[::1]:$A/via-v6"
  echo "== connect ipv6"; c -g -p -x "\$HTTP_PROXY" "http://[::1]:$A/via-v6"
  echo "== raw"
  python3 probe.py tcp 127.0.0.1 $A
  python3 probe.py tcp 127.0.0.1 $F
  python3 probe.py tcp ::1 $A
  python3 probe.py tcp 1.1.1.1 443
  python3 probe.py udp 127.0.0.1 $U
  python3 probe.py udp 1.1.1.1 53
  python3 probe.py udp ::1 $U
  python3 probe.py dns example.org 0
  echo "== inner loopback"
  python3 -u -m http.server 0 --bind 127.0.0.1 >"\$TMPDIR/inner.log" 2>&1 &
  i=0; IP=
  while [ -z "\$IP" ] && [ \$i -lt 100 ]; do
    sleep 0.1; i=\$((i + 1))
    IP=\$(sed -n 's/.*port \\([0-9]*\\).*/\\1/p' "\$TMPDIR/inner.log" | head -1)
  done
  curl -sS --max-time 5 -o /dev/null -w "inner %{http_code}\\n" http://127.0.0.1:\$IP/
  kill %1
Y
	"$VIGIL" run -q "$tmp/w/j.yaml" >"$tmp/out" 2>&1
	run=$(ls "$VIGIL_HOME/runs" | head -1)
	out=$(cat "$VIGIL_HOME/runs/$run/tasks/0/stdout" 2>/dev/null)
	log=$(cat "$VIGIL_HOME/runs/$run/egress.jsonl" 2>/dev/null)
	has() { printf '%s\n' "$out" | grep -qF -- "$1" ||
	    fail "$level: no '$1' in the task's output:
$out
$(cat "$tmp/out")"; }
	logged() { printf '%s\n' "$log" | grep -qF -- "$1" ||
	    fail "$level: no '$1' in egress.jsonl:
$log"; }
	# Through the proxy: allowed, answered.
	has "== http allowed
allowed-body
 rc=0"
	has "== connect allowed
allowed-body
 rc=0"
	has "== socks allowed
allowed-body
 rc=0"
	# Refused, told.
	has "vigil egress proxy: 127.0.0.1:$F refused (not listed): isolation.network does not allow it"
	has "== socks forbidden
 rc=97"
	has "== socks denied name
 rc=97"
	has "== socks ipv6
 rc=97"
	has "== connect ipv6
 rc=56"
	# Around it: nothing.
	for p in "tcp 127.0.0.1 $A" "tcp 127.0.0.1 $F" "tcp ::1 $A" \
	    "tcp 1.1.1.1" "udp 1.1.1.1" "dns example.org"; do
		set -- $p
		has "$1 refused:"
	done
	printf '%s\n' "$out" | grep -q "tcp-open" && fail "$level: raw TCP got out: $out"
	has "inner 200"
	# The log: each proxied connection, its bytes, its rule.
	logged "\"proto\":\"http\",\"host\":\"127.0.0.1\",\"port\":$A,\"addr\":\"127.0.0.1\",\"allowed\":true,\"rule\":\"allow 127.0.0.1:$A\""
	logged "\"proto\":\"connect\",\"host\":\"127.0.0.1\",\"port\":$A"
	logged "\"proto\":\"socks5\",\"host\":\"localhost\",\"port\":$A,\"addr\":\"127.0.0.1\",\"allowed\":true,\"rule\":\"allow localhost\""
	logged "\"host\":\"127.0.0.1\",\"port\":$F,\"addr\":\"\",\"allowed\":false,\"rule\":\"not listed\""
	logged "\"host\":\"localhost\",\"port\":$F,\"addr\":\"\",\"allowed\":false,\"rule\":\"deny localhost:$F\""
	logged "\"host\":\"[::1]\",\"port\":$A,\"addr\":\"\",\"allowed\":false"
	printf '%s\n' "$log" | grep "\"port\":$A,\"addr\":\"127.0.0.1\",\"allowed\":true" |
	    grep -q '"down":[1-9]' || fail "$level: no bytes counted: $log"
	# The run says what was refused.
	grep -q "egress: the proxy refused 5 connections (the first: 127.0.0.1:$F)" "$tmp/out" ||
	    fail "$level: no summary of the refusals: $(cat "$tmp/out")"
	rm -rf "$VIGIL_HOME"
done
# The servers saw only what the proxy let through.
expect "$(sort "$tmp/allowed.log" | tr '\n' ' ')" \
    "/via-connect /via-connect /via-http /via-http /via-socks /via-socks " \
    "requests the allowed server saw"
expect "$(cat "$tmp/forbidden.log")" "" "requests the forbidden server saw"
expect "$(cat "$tmp/udp.log")" "" "datagrams the UDP listener saw"
echo "ok: an allow-list lets through only what it lists, and logs it"

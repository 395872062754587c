#!/bin/sh
# s1303: a task in a container under an isolation.network allow-list
# tries every way around the egress proxy, in a podman container (the
# docker backend) and in apptainer (the singularity backend).  HTTP
# servers stand in for an allowed host (the host's loopback), a
# forbidden one (every IPv4 address of the host) and one on the host's
# IPv6 loopback.  Through the proxy the allowed server answers and the
# forbidden one is refused; around it raw TCP to the host's loopback, to
# its other addresses, to ::1 and to the outside finds no route, and a
# DNS query to an outside resolver gets no answer.  Only the proxied
# requests reach the allowed server; the others see nothing.
. "$(dirname "$0")/sec-lib.sh"
top=$(cd "$sec_dir/../.." && pwd)
command -v python3 >/dev/null || skip "python3 is needed for the servers"
pm=$(mktemp -d /tmp/vg-pm.XXXXXX)
pids=""
sec_cleanup() {
	kill $pids 2>/dev/null
	"$top/tests/harness/podman-down" "$pm/pm" >/dev/null 2>&1
	rm -rf "$tmp" "$pm"
}
"$top/tests/harness/podman-up" "$pm/pm" >"$tmp/podman-up.log" 2>&1 ||
    fail "podman could not start: $(cat "$tmp/podman-up.log")"
DOCKER_HOST=unix://$pm/pm/podman.sock
export DOCKER_HOST
up=$("$top/tests/harness/apptainer-up") || fail "apptainer-up: $up"
eval "$up"

cat >"$tmp/srv.py" <<'PY'
import http.server, socket, sys
kind, addr, portfile, log = sys.argv[1:5]
class S(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(log, "a").write(self.path + "\n")
        body = (kind + "-body\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = S((addr, 0), H)
open(portfile, "w").write(str(srv.server_address[1]))
srv.serve_forever()
PY
for s in "allowed 127.0.0.1" "forbidden 0.0.0.0" "v6 ::1"; do
	set -- $s
	: >"$tmp/$1.log"
	python3 "$tmp/srv.py" $1 $2 "$tmp/$1.port" "$tmp/$1.log" &
	pids="$pids $!"
done
for k in allowed forbidden v6; do
	i=0
	while [ ! -s "$tmp/$k.port" ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ -s "$tmp/$k.port" ] || fail "the $k server did not start"
done
A=$(cat "$tmp/allowed.port") F=$(cat "$tmp/forbidden.port") S=$(cat "$tmp/v6.port")
# The host's own IPv4 addresses, each reachable from the host itself.
addrs=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v : | grep . | head -3)
[ -n "$addrs" ] || addrs=127.0.0.2
mkdir -m 755 "$tmp/w"
cat >"$tmp/w/probe.sh" <<'P'
P=${HTTP_PROXY##*:}
g() { printf "$1" | busybox nc -w 5 127.0.0.1 $P | head -n 1 | tr -d '\r'; }
echo "proxy allowed: $(g 'GET http://127.0.0.1:@A@/via-proxy HTTP/1.0\r\n\r\n')"
echo "proxy forbidden: $(g 'CONNECT 127.0.0.1:@F@ HTTP/1.1\r\n\r\n')"
t() {
  if printf 'GET /raw HTTP/1.0\r\n\r\n' | busybox nc -w 3 "$1" "$2" 2>/dev/null | grep -q body; then
    echo "tcp $1 $2 open"
  else
    echo "tcp $1 $2 none"
  fi
}
t 127.0.0.1 @A@
t 127.0.0.1 @F@
t ::1 @S@
for h in @ADDRS@; do t $h @F@; done
t 1.1.1.1 443
if busybox nslookup example.org 1.1.1.1 2>&1 | grep -qE 'NXDOMAIN|^Name:|find'; then
  echo "dns answered"
else
  echo "dns none"
fi
P
sed -i -e "s/@A@/$A/g" -e "s/@F@/$F/g" -e "s/@S@/$S/g" \
    -e "s/@ADDRS@/$(echo $addrs)/" "$tmp/w/probe.sh"

for be in docker singularity; do
	if [ $be = docker ]; then
		img=localhost/vigil-test:latest extra=""
	else
		img=$BUSYBOX_SIF
		extra="singularity:
  binary: $APPTAINER_WRAP"
	fi
	{
		cat <<Y
version: 1
name: s1303-$be
backend: $be
image: $img
isolation:
  network:
    allow: ["127.0.0.1:$A"]
$extra
command: |
Y
		sed 's/^/  /' "$tmp/w/probe.sh"
	} >"$tmp/w/$be.yaml"
	"$VIGIL" run -q "$tmp/w/$be.yaml" >"$tmp/out" 2>&1
	run=$(ls -t "$VIGIL_HOME/runs" | head -1)
	out=$(cat "$VIGIL_HOME/runs/$run/tasks/0/stdout" 2>/dev/null)
	has() { printf '%s\n' "$out" | grep -qxF -- "$1" ||
	    fail "$be: no '$1' in the task's output:
$out
$(cat "$tmp/out")"; }
	has "proxy allowed: HTTP/1.0 200 OK"
	has "proxy forbidden: HTTP/1.1 403 Forbidden"
	has "tcp 127.0.0.1 $A none"
	has "tcp 127.0.0.1 $F none"
	has "tcp ::1 $S none"
	for h in $addrs; do has "tcp $h $F none"; done
	has "tcp 1.1.1.1 443 none"
	has "dns none"
	grep -q "egress: the proxy refused 1 connection (the first: 127.0.0.1:$F)" \
	    "$tmp/out" || fail "$be: no refusal summary: $(cat "$tmp/out")"
done
# The servers saw only what the proxy let through.
expect "$(cat "$tmp/allowed.log")" "/via-proxy
/via-proxy" "requests the allowed server saw"
expect "$(cat "$tmp/forbidden.log")" "" "requests the forbidden server saw"
expect "$(cat "$tmp/v6.log")" "" "requests the IPv6 server saw"
echo "ok: containers under an allow-list reach only what it lists"

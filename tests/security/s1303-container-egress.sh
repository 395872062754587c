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
pids=""
sec_extra='kill $pids 2>/dev/null'
sec_podman_up
up=$("$top/tests/harness/apptainer-up") || fail "apptainer-up: $up"
eval "$up"

for s in "allowed 127.0.0.1" "forbidden 0.0.0.0" "v6 ::1"; do
	set -- $s
	: >"$tmp/$1.log"
	python3 "$top/tests/harness/http-kind.py" $1 $2 "$tmp/$1.port" "$tmp/$1.log" &
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

#!/bin/sh
# bench/egress.sh - the egress proxy against a direct connection, same
# run: throughput of one SIZE download (default 1G, a sparse file a
# local HTTP server sends with sendfile) and the time of N fresh
# connections each fetching a 2-byte file (the median), first directly
# from the host, then from a vigil task under an isolation.network
# allow-list through its proxy (plain HTTP: curl -x $HTTP_PROXY).
# LINK=loopback (the default) serves on the host's 127.0.0.1;
# LINK=veth serves from a network namespace of the bench's own behind a
# veth pair (10.203.77.2), as a host across a link would.
# Needs root (the allow-list's namespace), python3 and curl (LINK=veth:
# ip, unshare and nsenter).
#   B=build/release SIZE=1G N=200 LINK=loopback bench/egress.sh
set -eu
B=${B:-build/release}
SIZE=${SIZE:-1G}
N=${N:-200}
ROUNDS=${ROUNDS:-3}
LINK=${LINK:-loopback}
VIGIL=$(cd "$B" && pwd)/vigil
[ "$(id -u)" = 0 ] || { echo "bench/egress.sh: run as root"; exit 77; }
tmp=$(mktemp -d /tmp/vigil-bench-egress.XXXXXX)
chmod 755 "$tmp"
pid= spid= nsp=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	[ -z "$spid" ] || kill "$spid" 2>/dev/null
	[ -z "$nsp" ] || kill "$nsp" 2>/dev/null	# its veth goes with it
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/www" "$tmp/w"
truncate -s "$SIZE" "$tmp/www/big"
echo x >"$tmp/www/small"
cat >"$tmp/srv.py" <<'PY'
import http.server, os, sys
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    def copyfile(self, src, dst):
        dst.flush()
        self.connection.sendfile(src)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer((sys.argv[3], 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
case $LINK in
loopback)
	H=127.0.0.1
	python3 "$tmp/srv.py" "$tmp/www" "$tmp/port" "$H" &
	pid=$! ;;
veth)
	H=10.203.77.2
	if ip -4 addr show | grep -q '10\.203\.77\.'; then
		echo "bench/egress.sh: 10.203.77.0/30 is in use here"
		exit 1
	fi
	unshare --net sleep 1000000 &
	nsp=$!
	sleep 0.2
	ip link add "vgbh$$" type veth peer name "vgbs$$" netns "$nsp"
	ip addr add 10.203.77.1/30 dev "vgbh$$"
	ip link set "vgbh$$" up
	nsenter -t "$nsp" -n sh -c "ip addr add $H/30 dev vgbs$$ &&
	    ip link set vgbs$$ up && ip link set lo up"
	nsenter -t "$nsp" -n python3 "$tmp/srv.py" "$tmp/www" "$tmp/port" "$H" &
	pid=$! ;;
*)
	echo "bench/egress.sh: LINK is loopback or veth, not '$LINK'"
	exit 2 ;;
esac
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
P=$(cat "$tmp/port")

# The measuring commands, the same on every side ($X: the proxy option;
# $U: the server, by default the one above).
cat >"$tmp/w/measure.sh" <<SH
#!/bin/sh
X=\$1
U=\${2:-http://$H:$P}
r=0
while [ \$r -lt $ROUNDS ]; do
	curl -sS \$X -o /dev/null -w 'speed %{speed_download}\n' \\
	    \$U/big
	r=\$((r + 1))
done
urls=
i=0
while [ \$i -lt $N ]; do urls="\$urls \$U/small"; i=\$((i + 1)); done
curl -sS \$X -H 'Connection: close' -o /dev/null -w 'conn %{time_total}\n' \$urls
SH
chmod 755 "$tmp/w/measure.sh"
"$tmp/w/measure.sh" "--noproxy 127.0.0.1,$H" >"$tmp/direct"
# A task of the same run with the host's network (the same sandbox,
# no proxy), then one under the allow-list.
task() {	# NAME NETWORK COMMAND-ARGUMENT
	cat >"$tmp/w/$1.yaml" <<Y
version: 1
name: bench-egress-$1
workdir: $tmp/w
isolation:
  network: $2
command: ./measure.sh "$3"
Y
	VIGIL_HOME=$tmp/home-$1 VIGIL_SITE_CONFIG=/nonexistent \
	    VIGIL_USER_CONFIG=/nonexistent "$VIGIL" run -q "$tmp/w/$1.yaml" \
	    >"$tmp/out" 2>&1 ||
	    { cat "$tmp/out" "$tmp"/home-$1/runs/*/tasks/0/stderr; exit 1; }
	cp "$tmp"/home-$1/runs/*/tasks/0/stdout "$tmp/$1"
}
# A reference relay of the same host: socat between two loopback
# connections through a 1 MiB buffer (what a relay in user space pays
# here), when installed.
if command -v socat >/dev/null 2>&1; then
	SP=$((P + 1))
	[ "$SP" -lt 65536 ] || SP=$((P - 1))
	socat -b 1048576 TCP-LISTEN:$SP,bind=127.0.0.1,reuseaddr,fork TCP:$H:$P &
	spid=$!
	sleep 0.3
	"$tmp/w/measure.sh" "--noproxy 127.0.0.1,$H" "http://127.0.0.1:$SP" \
	    >"$tmp/socat"
	kill "$spid" 2>/dev/null
	spid=
fi
task host host "--noproxy 127.0.0.1,$H"
task proxy "{allow: [\"$H:$P\"]}" "--noproxy '' -x \$HTTP_PROXY"

best() { awk '$1 == "speed" && $2 > m { m = $2 } END { printf "%.0f", m / 1048576 }' "$1"; }
median() {
	awk '$1 == "conn" { print $2 * 1000 }' "$1" | sort -n |
	    awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'
}
d=$(best "$tmp/direct") h=$(best "$tmp/host") p=$(best "$tmp/proxy")
ld=$(median "$tmp/direct") lh=$(median "$tmp/host") lp=$(median "$tmp/proxy")
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
echo "download $SIZE over $LINK (best of $ROUNDS): direct $d MiB/s  task with host network $h MiB/s  task through the proxy $p MiB/s"
echo "  ratio proxy/direct $(ratio "$p" "$d")  proxy/host-network task $(ratio "$p" "$h")"
if [ -s "$tmp/socat" ]; then
	s=$(best "$tmp/socat")
	echo "  reference: socat relaying on the host $s MiB/s, ratio socat/direct $(ratio "$s" "$d")"
else
	echo "  reference: socat is not installed, no reference relay measured"
fi
echo "new connection + 2-byte GET (median of $N): direct $ld ms  host-network task $lh ms  proxy $lp ms  added $(awk "BEGIN { printf \"%.3f\", $lp - $ld }") ms"
[ ! -s "$tmp/socat" ] ||
	echo "  reference: through socat $(median "$tmp/socat") ms"

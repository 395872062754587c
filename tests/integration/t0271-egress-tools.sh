#!/bin/sh
# isolation.network allow-list with real tools through the proxy, against
# local servers standing in for allowed hosts: curl over HTTPS (CONNECT)
# to a server whose certificate a test CA signed, trusting that CA; pip
# downloading a wheel from a simple index (python3 -m http.server); git
# cloning over dumb HTTP.  An HTTPS host not listed is refused.  Each
# tool's connections are in vigil status, named to the task.  Needs root
# (the proxy's namespace), python3, openssl, pip and git.
set -u
. "$(dirname "$0")/engine-lib.sh"
[ "$(id -u)" = 0 ] || { echo "the egress proxy needs root"; exit 77; }
# The real tools, from the distribution (idempotent, quick when there).
"$(dirname "$0")/../../scripts/deps.sh" python3-pip openssl git curl \
    >/dev/null || { echo "FAIL: scripts/deps.sh python3-pip openssl git curl"; exit 1; }
for c in python3 openssl git; do
	command -v $c >/dev/null || { echo "$c is needed"; exit 77; }
done
python3 -m pip --version >/dev/null 2>&1 || { echo "pip is needed"; exit 77; }
cd "$W" || fail "no work dir"

# A test CA and a certificate for localhost it signed.
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem \
    -days 1 -subj /CN=vigil-test-ca >/dev/null 2>&1 || fail "CA"
openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
    -subj /CN=localhost >/dev/null 2>&1 || fail "csr"
printf 'subjectAltName=DNS:localhost\n' >ext.cnf
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -out srv.pem -days 1 -extfile ext.cnf >/dev/null 2>&1 || fail "cert"

# Served trees: a page, a simple index with one wheel, a bare repo.
mkdir -p www/simple/vgdemo git
echo "hello over tls" >www/hello.txt
python3 - <<'PY' || fail "wheel"
import zipfile
w = "www/simple/vgdemo/vgdemo-1.0-py3-none-any.whl"
with zipfile.ZipFile(w, "w") as z:
    z.writestr("vgdemo/__init__.py", "X = 1\n")
    z.writestr("vgdemo-1.0.dist-info/METADATA",
               "Metadata-Version: 2.1\nName: vgdemo\nVersion: 1.0\n")
    z.writestr("vgdemo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n"
               "Generator: t0271\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("vgdemo-1.0.dist-info/RECORD", "")
open("www/simple/vgdemo/index.html", "w").write(
    '<a href="vgdemo-1.0-py3-none-any.whl">vgdemo-1.0-py3-none-any.whl</a>\n')
open("www/simple/index.html", "w").write('<a href="vgdemo/">vgdemo</a>\n')
PY
( cd "$W" && git init -q src && cd src && echo "cloned through the proxy" >README &&
  git add README && git -c user.name=t -c user.email=t@t commit -qm one ) ||
    fail "repo"
git clone -q --bare src git/repo.git && (cd git/repo.git && git update-server-info) ||
    fail "bare repo"

cat >srv.py <<'PY'
import functools, http.server, ssl, sys
kind, root, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
h = functools.partial(H, directory=root)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
if kind == "https":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(portfile, "w").write(str(srv.server_address[1]))
srv.serve_forever()
PY
python3 srv.py https "$W/www" "$W/h.port" "$W/srv.pem" "$W/srv.key" &
p1=$!
python3 srv.py http "$W/www" "$W/p.port" &
p2=$!
python3 srv.py http "$W/git" "$W/g.port" &
p3=$!
trap 'kill $p1 $p2 $p3 2>/dev/null; rm -rf "$W"' EXIT INT TERM
for f in h p g; do
	i=0
	while [ ! -s "$W/$f.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$W/$f.port" ] || fail "server $f did not start"
done
H=$(cat h.port) P=$(cat p.port) G=$(cat g.port)

mkdir wd && cp ca.pem wd/
cat >wd/t.yaml <<Y
version: 1
name: tools
workdir: $W/wd
isolation:
  level: standard
  readable: [$W/wd]
  network:
    allow: ["localhost:$H", "localhost:$P", "localhost:$G"]
command: |
  export NO_PROXY= no_proxy= PIP_DISABLE_PIP_VERSION_CHECK=1
  echo "== https"
  curl -sS --max-time 20 --cacert ca.pem https://localhost:$H/hello.txt
  echo "== https not listed"
  curl -sS --max-time 20 --cacert ca.pem https://127.0.0.1:$H/hello.txt
  echo "rc=\$?"
  echo "== pip"
  python3 -m pip download -q --no-deps --no-cache-dir \\
      --index-url http://localhost:$P/simple -d "\$VIGIL_TASK_DIR/wheels" vgdemo
  ls "\$VIGIL_TASK_DIR/wheels"
  echo "== git"
  git clone -q http://localhost:$G/repo.git "\$VIGIL_TASK_DIR/src"
  cat "\$VIGIL_TASK_DIR/src/README"
Y
"$VIGIL" run -q wd/t.yaml 2>"$W/err" || fail "run: $(cat "$W/err")
$(cat "$VIGIL_HOME"/runs/*/tasks/0/stdout "$VIGIL_HOME"/runs/*/tasks/0/stderr)"
run=$(last_run)
out=$(cat "$VIGIL_HOME/runs/$run/tasks/0/stdout")
expect_eq "task output" "== https
hello over tls
== https not listed
rc=56
== pip
vgdemo-1.0-py3-none-any.whl
== git
cloned through the proxy" "$out"
"$VIGIL" status "$run" >"$W/st" || fail "status"
for want in "task 0    reached  localhost:$H  1 connection" \
    "task 0    refused  127.0.0.1:$H  1 connection (not listed)" \
    "task 0    reached  localhost:$P  " "task 0    reached  localhost:$G  "; do
	grep -qF -- "$want" "$W/st" || fail "no '$want' in:
$(cat "$W/st")"
done
grep -q "refused  .*localhost" "$W/st" && fail "a listed host refused: $(cat "$W/st")"
pass

# sock-lib.sh - sourced by the s03xx tests after sec-lib.sh: a root
# listener on a Unix socket (pathname or "@abstract") that writes a line
# to its log for every connection it accepts, and a task command that
# tries to connect.  "the listener saw nothing" is the host untouched.
listeners=
sock_cleanup() {
	for p in $listeners; do kill "$p" 2>/dev/null; done
	for d in ${sock_dirs:-}; do rm -rf "$d"; done
	sec_cleanup
}
trap 'sock_cleanup' EXIT
command -v python3 >/dev/null || skip "the s03xx tests need python3 for the listeners"
# listen PATH LOG [NAME]: starts a listener (its process named NAME,
# as a daemon's would be), waits until it is bound.
listen() {
	python3 - "$1" "$2" "${3:-}" <<'PY' &
import ctypes, os, socket, sys
path, log = sys.argv[1], sys.argv[2]
if sys.argv[3]:
    ctypes.CDLL(None).prctl(15, sys.argv[3].encode(), 0, 0, 0)
addr = "\0" + path[1:] if path.startswith("@") else path
if not path.startswith("@"):
    try:
        os.unlink(path)
    except OSError:
        pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(addr)
s.listen(16)
open(log + ".ready", "w").close()
while True:
    c, _ = s.accept()
    with open(log, "a") as f:
        f.write("connection\n")
    c.close()
PY
	listeners="$listeners $!"
	i=0
	while [ ! -e "$2.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$2.ready" ] || fail "listener on $1 did not start"
}
# connect_cmd PATH: a shell command that connects to PATH (or "@name")
# and prints "connected" or the error.
connect_cmd() {
	echo "python3 -c 'import socket,sys
p=sys.argv[1]
a=b\"\\\\0\"+p[1:].encode() if p.startswith(\"@\") else p
s=socket.socket(socket.AF_UNIX)
try:
    s.connect(a); print(\"connected\")
except OSError as e:
    print(\"refused\", e.errno)' '$1'"
}
# job FILE LEVEL COMMAND [EXTRA-YAML]: writes a one-task manifest.
job() {
	cat >"$1" <<EOF2
version: 1
name: $(basename "$1" .yaml)
isolation:
  level: $2
${4:-}
command: |
$(printf '%s\n' "$3" | sed 's/^/  /')
EOF2
}
# saw LOG: the connections the listener saw ("" when none).
saw() { cat "$1" 2>/dev/null; }

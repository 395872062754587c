#!/bin/sh
# mcp.sh - the round trip of an MCP tools/call running `true` in a warm
# local session (vigil mcp over stdio, the session opened by the server)
# against `vigil exec --session ID -- true` in the same session, in the
# same run: blocks of BLOCK commands of each, interleaved so that the
# load of a shared machine hits both alike.  Prints the mean and median
# of each, the difference in ms and the ratio (target: MCP adds at most
# 1 ms), and `vigil exec --session --json` (what the server runs per
# call) for where a difference comes from; then the same tools/call over
# Streamable HTTP (`vigil mcp --listen 127.0.0.1:0`, one keep-alive
# connection, its own warm session).  N=100 commands of each by
# default.  Measurements taken with it are in bench/README.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-100} BLOCK=${BLOCK:-10}
VIGIL=${B:-$top/build/release}/vigil
[ -x "$VIGIL" ] || make -C "$top" --no-print-directory >/dev/null
tmp=$(mktemp -d /tmp/vigil-bench-mcp.XXXXXX)
export VIGIL_HOME=$tmp/home
"$VIGIL" mcp --listen 127.0.0.1:0 2>"$tmp/http.err" &
http=$!
trap 'kill $http 2>/dev/null; wait $http; rm -rf "$tmp"' EXIT
for i in $(seq 100); do
	grep -q 'bearer token' "$tmp/http.err" && break
	sleep 0.1
done
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$VIGIL" "$N" "$BLOCK" "$tmp/http.err" <<'PY'
import http.client, json, re, statistics, subprocess, sys, time
vigil, n, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
err = open(sys.argv[4]).read()
port = int(re.search(r"127\.0\.0\.1:(\d+)/mcp", err).group(1))
token = re.search(r"bearer token: (\w+)", err).group(1)
conn = http.client.HTTPConnection("127.0.0.1", port)
hdr = {"Authorization": "Bearer " + token, "Accept": "application/json",
    "Content-Type": "application/json"}
def hrpc(method, params, i=[0]):
    i[0] += 1
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": i[0],
        "method": method, "params": params}), hdr)
    r = conn.getresponse()
    body = r.read()
    if method == "initialize":
        hdr["Mcp-Session-Id"] = r.getheader("Mcp-Session-Id")
    return json.loads(body)
srv = subprocess.Popen([vigil, "mcp"], stdin=subprocess.PIPE,
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
ids = iter(range(1, 1 << 30))
def rpc(method, params):
    i = next(ids)
    srv.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i,
        "method": method, "params": params}) + "\n").encode())
    srv.stdin.flush()
    while True:
        m = json.loads(srv.stdout.readline())
        if m.get("id") == i:
            return m
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}})
call = {"name": "exec", "arguments": {"command": "true"}}
r = rpc("tools/call", call)["result"]["structuredContent"]
session = r["session"]
for _ in range(3):
    rpc("tools/call", call)
    subprocess.run([vigil, "exec", "--session", session, "--", "true"],
        check=True)
hrpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}})
for _ in range(4):
    hrpc("tools/call", call)
mcp, cli, js, web = [], [], [], []
def timed(argv, into):
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    into.append(time.perf_counter() - t)
while len(mcp) < n:
    for _ in range(block):
        t = time.perf_counter()
        r = rpc("tools/call", call)["result"]
        mcp.append(time.perf_counter() - t)
        assert r["structuredContent"]["exit_code"] == 0, r
    for _ in range(block):
        timed([vigil, "exec", "--session", session, "--", "true"], cli)
    for _ in range(block):
        timed([vigil, "exec", "--session", session, "--json", "--",
            "true"], js)
    for _ in range(block):
        t = time.perf_counter()
        r = hrpc("tools/call", call)["result"]
        web.append(time.perf_counter() - t)
        assert r["structuredContent"]["exit_code"] == 0, r
srv.stdin.close()
srv.wait()
ms = lambda v: v * 1000
for name, v in (("mcp tools/call exec true", mcp),
        ("vigil exec --session true", cli),
        ("  the same with --json", js),
        ("mcp over HTTP tools/call", web)):
    print("%-27s n=%d mean %.2f ms  median %.2f ms" % (name, len(v),
        ms(statistics.mean(v)), ms(statistics.median(v))))
print("difference (mcp - exec): mean %+.2f ms, median %+.2f ms" % (
    ms(statistics.mean(mcp) - statistics.mean(cli)),
    ms(statistics.median(mcp) - statistics.median(cli))))
print("difference (mcp - exec --json): mean %+.2f ms, median %+.2f ms" % (
    ms(statistics.mean(mcp) - statistics.mean(js)),
    ms(statistics.median(mcp) - statistics.median(js))))
print("ratio (mcp / exec): mean %.3f, median %.3f" % (
    statistics.mean(mcp) / statistics.mean(cli),
    statistics.median(mcp) / statistics.median(cli)))
print("difference (mcp over HTTP - exec): mean %+.2f ms, median %+.2f ms" % (
    ms(statistics.mean(web) - statistics.mean(cli)),
    ms(statistics.median(web) - statistics.median(cli))))
PY
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"

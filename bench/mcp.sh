#!/bin/sh
# mcp.sh - the round trip of an MCP tools/call running `true` in a warm
# local session (vigil mcp over stdio, the session opened by the server)
# against `vigil exec --session ID -- true` in the same session, in the
# same run: blocks of BLOCK commands of each, interleaved so that the
# load of a shared machine hits both alike.  Prints the mean and median
# of each, the difference in ms and the ratio (target: MCP adds at most
# 1 ms), and `vigil exec --session --json` (what the server runs per
# call) for where a difference comes from.  N=100 commands of each by
# default.  Measurements taken with it are in bench/README.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-100} BLOCK=${BLOCK:-10}
VIGIL=${B:-$top/build/release}/vigil
[ -x "$VIGIL" ] || make -C "$top" --no-print-directory >/dev/null
tmp=$(mktemp -d /tmp/vigil-bench-mcp.XXXXXX)
export VIGIL_HOME=$tmp/home
trap 'rm -rf "$tmp"' EXIT
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$VIGIL" "$N" "$BLOCK" <<'PY'
import json, statistics, subprocess, sys, time
vigil, n, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
mcp, cli, js = [], [], []
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
srv.stdin.close()
srv.wait()
ms = lambda v: v * 1000
for name, v in (("mcp tools/call exec true", mcp),
        ("vigil exec --session true", cli),
        ("  the same with --json", js)):
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
PY
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"

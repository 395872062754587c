#!/bin/sh
# t0903-mcp-job-input.sh - input to a background command after its
# start, from the CLI and over MCP: `vigil exec --background
# --open-stdin` keeps the command's stdin open (a FIFO in its job
# directory, held by the job's runner), `vigil session input` writes
# TEXT or our stdin to it and --close ends it, so the command reads
# every line in order and then end of file; MCP's job_start open_stdin
# and job_input do the same; input to an ended job, to a job started
# without --open-stdin, and --open-stdin without --background are
# refused with what to do (links planted at the FIFO: s1402).
set -u
VIGIL=${VIGIL:?}
tmp=$(mktemp -d)
trap 'sessions_down; rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
mkdir "$tmp/w" && cd "$tmp/w" || exit 1
. "$(dirname "$0")/session-lib.sh"
fail() { echo "FAIL: $*"; exit 1; }
expect() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; }

sid=$("$VIGIL" session start) || fail "session start"
j=$("$VIGIL" exec --session "$sid" --background --open-stdin -- \
    sh -c 'while read -r l; do echo "got $l"; done; echo end') ||
	fail "exec --open-stdin"
"$VIGIL" session input "$sid" "$j" "one
" || fail "input TEXT"
printf 'two\nthree\n' | "$VIGIL" session input "$sid" "$j" ||
	fail "input from stdin"
"$VIGIL" session input "$sid" "$j" --close </dev/null || fail "input --close"
out=$("$VIGIL" session output "$sid" "$j" --wait)
expect "exit of the job" 0 $?
expect "the job's output" "got one
got two
got three
end" "$out"
err=$("$VIGIL" session input "$sid" "$j" "x" 2>&1)
expect "input to an ended job: exit" 2 $?
case $err in *"job $j has ended (exited)"*) ;; *) fail "ended: $err" ;; esac

# Without --open-stdin there is no input to give.
j2=$("$VIGIL" exec --session "$sid" --background -- sleep 30) || fail "exec"
err=$("$VIGIL" session input "$sid" "$j2" "x" 2>&1)
expect "input without --open-stdin: exit" 2 $?
case $err in *"--background --open-stdin"*) ;; *) fail "not open: $err" ;; esac
"$VIGIL" session kill "$sid" "$j2" >/dev/null || fail "kill"

err=$("$VIGIL" exec --session "$sid" --open-stdin -- true 2>&1)
expect "--open-stdin without --background: exit" 2 $?
case $err in *"--open-stdin goes with --background"*) ;; *) fail "usage: $err" ;; esac
"$VIGIL" session stop "$sid" >/dev/null

# Over MCP: job_start with open_stdin, job_input twice (the second
# closing), job_output with wait.
python3 - "$VIGIL" <<'PY' || fail "mcp"
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
n = 0
def call(method, params=None):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": method}
    if params is not None:
        msg["params"] = params
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()
    while True:
        r = json.loads(p.stdout.readline())
        if r.get("id") == n:
            return r
def tool(name, **args):
    r = call("tools/call", {"name": name, "arguments": args})["result"]
    return r, r.get("structuredContent", {})
call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t0903", "version": "1"}})
p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
names = [t["name"] for t in call("tools/list")["result"]["tools"]]
assert "job_input" in names, names
r, s = tool("job_start", command="cat", open_stdin=True)
assert not r.get("isError"), r
job = s["job"]
r, s = tool("job_input", job=job, data="hello\n")
assert not r.get("isError") and s == {"job": job, "sent": 6,
                                       "closed": False}, r
r, s = tool("job_input", job=job, data="bye\n", close=True)
assert not r.get("isError") and s["closed"] is True, r
r, s = tool("job_output", job=job, wait=True)
assert s["stdout"] == "hello\nbye\n" and s["exit_code"] == 0, r
r, s = tool("job_input", job=job, data="late\n")
assert r.get("isError"), r
assert "has ended" in r["content"][0]["text"], r
p.stdin.close()
p.wait(timeout=30)
PY
echo "t0903: ok"

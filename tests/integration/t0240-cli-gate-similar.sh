#!/bin/sh
# Interactive mode of the policy gate, on a pseudo-terminal: "a" (all
# similar) approves a flagged task and every later task whose deciding
# finding has the same rule, without asking again; another rule is still
# asked about; every decision is audited (ask-allow, ask-allow-similar,
# ask-deny), in the audit log and in the store (vigil report).
set -u
. "$(dirname "$0")/engine-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "no python3"; exit 77; }

# sudo -n never waits for a password; crontab -r is never approved.
cat >"$W/g.yaml" <<Y
version: 1
name: similar
policy: {mode: interactive, audit_log: $W/audit.jsonl}
matrix:
  include:
    - {p: sudo, a: "-n", b: "true"}
    - {p: crontab, a: "-r", b: "-u"}
    - {p: sudo, a: "-n", b: "false"}
    - {p: sudo, a: "-n", b: ":"}
command: ["\${{ matrix.p }}", "\${{ matrix.a }}", "\${{ matrix.b }}"]
Y
# Answers each prompt from the list, in order, on the run's terminal;
# prints the prompts seen.
python3 - "$VIGIL" "$W/g.yaml" a n >"$W/prompts" 2>"$W/pty.err" <<'P' ||
import os, pty, sys, time
answers = list(sys.argv[3:])
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "run", "-q", "--jobs", "1",
        sys.argv[2]])
seen, buf, deadline = 0, b"", time.time() + 60
while time.time() < deadline:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
    while buf.count(b"for the rest of this run: ") > seen:
        seen += 1
        os.write(fd, (answers.pop(0) if answers else "n").encode() + b"\n")
os.waitpid(pid, 0)
for line in buf.decode(errors="replace").splitlines():
    if line.startswith("vigil: task"):
        print(line.strip())
print("prompts", seen)
P
    fail "pty driver: $(cat "$W/pty.err")"
grep -q "^prompts 2$" "$W/prompts" || fail "prompts: $(cat "$W/prompts")"
grep -q "^vigil: task 0: .*priv-wrapper" "$W/prompts" ||
    fail "task 0 not asked: $(cat "$W/prompts")"
grep -q "^vigil: task 1: .*crontab" "$W/prompts" ||
    fail "task 1 not asked: $(cat "$W/prompts")"
python3 - "$W/audit.jsonl" <<'P' || fail "audit: $(cat "$W/audit.jsonl")"
import json, sys
v = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    v[r["task"]] = (r["verdict"], r["rule"])
assert v == {0: ("ask-allow", "builtin:priv-wrapper"),
    1: ("ask-deny", "builtin:crontab"),
    2: ("ask-allow-similar", "builtin:priv-wrapper"),
    3: ("ask-allow-similar", "builtin:priv-wrapper")}, v
P
"$VIGIL" report last --json >"$W/r.json" 2>"$W/r.err" ||
    fail "report: $(cat "$W/r.err")"
python3 - "$W/r.json" <<'P' || fail "report counts: $(cat "$W/r.json")"
import json, sys
c = json.load(open(sys.argv[1]))["policy"]["counts"]
assert c["ask-allow"] == 1 and c["ask-deny"] == 1, c
assert c["ask-allow-similar"] == 2, c
P
# The task refused when asked never ran; the approved ones did.
expect_eq "task 1" "DENIED" "$(jq_run last 'd["tasks"][1]["state"]')"
pass

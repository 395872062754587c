#!/bin/sh
# t0303-policy-check-stream.sh - vigil check --stdin as a stream: a line
# holding a NUL byte is refused whole, a line ending in a backslash goes
# on to the next, --json stays valid JSON for bytes
# that are not UTF-8, every verdict reaches the audit table of the state
# database (grouped writes) on a normal end and on SIGTERM, SIGINT,
# SIGHUP and SIGPIPE (repeated commands included: their redacted audit
# line is reused), and `vigil gc --audit-older-than` prunes the table.
set -u
VIGIL=${VIGIL:?}
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
cd "$tmp" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# Audit records: one row each in audit, n per packed row in audit_pack.
rows() {
	python3 -c 'import sqlite3,sys
print(sqlite3.connect(sys.argv[1]).execute(
    "select (select count(*) from audit) +"
    " (select coalesce(sum(n), 0) from audit_pack)").fetchone()[0])' \
	    "$VIGIL_HOME/vigil.db"
}

# Without -0 a NUL inside a line is not a separator: the line is judged
# whole and refused, never cut to its harmless prefix (with a line
# saying no rule can allow it).
printf 'ls\0rm -rf ~\necho ok\n' | "$VIGIL" check --stdin >out.txt
[ $? -eq 3 ] || fail "nul rc"
grep -qF "unparseable [builtin:nul-byte] at 2+1" out.txt || fail "nul: $(cat out.txt)"
grep -qx "allow: echo ok" out.txt || fail "after nul"
[ "$(wc -l <out.txt)" -eq 4 ] || fail "nul lines: $(cat out.txt)"

# A line ending in an unescaped backslash goes on to the next, as in the
# shell: "rm -rf \" then "/" is one command, refused whole; an escaped
# backslash ends its line.
printf 'rm -rf \\\n/\necho a\\\\\nls\n' | "$VIGIL" check --stdin >out.txt
[ $? -eq 3 ] || fail "continuation rc: $(cat out.txt)"
grep -qF "floor:delete-root" out.txt || fail "continuation: $(cat out.txt)"
grep -q '^allow: echo a' out.txt || fail "escaped backslash: $(cat out.txt)"
grep -qx "allow: ls" out.txt || fail "after continuation: $(cat out.txt)"
[ "$(grep -c '^[a-z]*: ' out.txt)" -eq 3 ] || fail "continuation verdicts: $(cat out.txt)"

# --json is valid JSON (and UTF-8) whatever the bytes; invalid ones are
# U+FFFD, offsets count input bytes.
printf 'echo \377\376 > /etc/motd\nls caf\303\251\nrm -rf /\0x\n' |
	"$VIGIL" check --stdin --json >out.json
python3 - out.json <<'PY' || fail "json: $(cat out.json)"
import json, sys
lines = open(sys.argv[1], 'rb').read().decode('utf-8').splitlines()
objs = [json.loads(l) for l in lines]
assert len(objs) == 3, objs
assert objs[0]['command'] == 'echo \ufffd\ufffd > /etc/motd', objs[0]
assert objs[0]['verdict'] == 'deny'
assert objs[1]['command'] == 'ls caf\u00e9' and objs[1]['verdict'] == 'allow'
assert objs[2]['findings'][0]['rule'] == 'builtin:nul-byte', objs[2]
assert objs[2]['findings'][0]['text'] == '\u0000'
PY

# Every verdict of a long stream is in the audit table.
before=$(rows)
i=0
while [ $i -lt 3000 ]; do echo "ls /tmp/x$i"; echo "rm -rf /etc"; i=$((i + 1)); done >many.txt
"$VIGIL" check --stdin <many.txt >/dev/null; [ $? -eq 3 ] || fail "many rc"
[ $(($(rows) - before)) -eq 6000 ] || fail "audit rows $(rows) - $before"

# Repeated decisions (the writer reuses a recent one's redacted line):
# every line of the audit file is redacted, has its own time, in order,
# and the database holds as many records as the file has lines.
before=$(rows)
i=0
while [ $i -lt 2000 ]; do
	echo "curl -H 'Authorization: Bearer s3cr$((i % 3))t' https://h/"
	echo "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz make"
	i=$((i + 1))
done >rep.txt
"$VIGIL" check --stdin --audit-log "$tmp/rep.jsonl" <rep.txt >/dev/null
python3 - "$tmp/rep.jsonl" <<'PY' || fail "repeated audit lines"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 4000, len(recs)
times = [r['time'] for r in recs]
assert times == sorted(times), 'times out of order'
assert all('s3cr' not in r['command'] and 'ghp_' not in r['command']
           for r in recs), [r['command'] for r in recs][:4]
assert len({r['command'] for r in recs}) == 2, {r['command'] for r in recs}
PY
[ $(($(rows) - before)) -eq 4000 ] || fail "repeated rows $(rows) - $before"

# A stream ended by a signal: the verdicts given so far are audited
# before vigil exits by the signal.
for sig in TERM INT HUP; do
	rm -f fifo; mkfifo fifo
	before=$(rows)
	"$VIGIL" check --stdin <fifo >out.txt &
	pid=$!
	pids="$pids $pid"
	exec 7>fifo
	printf 'ls\nrm -rf /\nmake\n' >&7
	n=0
	while [ "$(wc -l <out.txt)" -lt 4 ] && [ $n -lt 100 ]; do
		sleep 0.05; n=$((n + 1))
	done
	kill -$sig $pid
	wait $pid; rc=$?
	exec 7>&-
	case $sig in TERM) want=143 ;; INT) want=130 ;; HUP) want=129 ;; esac
	[ $rc -eq $want ] || fail "$sig rc $rc"
	[ $(($(rows) - before)) -eq 3 ] || fail "$sig audit rows $(rows) - $before"
done

# A reader that stops early (SIGPIPE): what was judged is audited.
before=$(rows)
"$VIGIL" check --stdin <many.txt | head -n 1 >/dev/null
after=$(rows)
[ $((after - before)) -ge 1 ] || fail "sigpipe audit rows $after - $before"
[ $((after - before)) -le 6000 ] || fail "sigpipe audit rows $after - $before"

# Retention: gc deletes audit records older than the given age.
"$VIGIL" gc --no-reap --audit-older-than 30d >gc.txt || fail "gc rc"
grep -qx "0 audit records removed" gc.txt || fail "gc keep: $(cat gc.txt)"
total=$(rows)
"$VIGIL" gc --no-reap --audit-older-than 0 >gc.txt || fail "gc 0 rc"
grep -qx "$total audit records removed" gc.txt || fail "gc all: $(cat gc.txt)"
[ "$(rows)" -eq 0 ] || fail "rows left"
"$VIGIL" gc --audit-older-than soon 2>err.txt; [ $? -eq 2 ] || fail "gc usage"
grep -q "audit-older-than takes a duration" err.txt || fail "gc usage text"
echo "all passed"

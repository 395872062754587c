#!/bin/sh
# t0301-policy-exec.sh - vigil exec: a denied command runs nothing and
# exits 3 with its reason on the first line of stderr (then how to allow
# it); an allowed one runs in the local
# backend and its exit code comes back; --timeout gives 124.
set -u
VIGIL=${VIGIL:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
cd "$tmp" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# Denied: nothing runs (the first part would create a marker).
"$VIGIL" exec -- "touch $tmp/marker; rm -rf /" </dev/null 2>err.txt; rc=$?
[ $rc -eq 3 ] || fail "denied rc $rc"
[ ! -e "$tmp/marker" ] || fail "denied command ran"
head -n 1 err.txt | grep -qF "vigil: exec: deny: destructive [floor:delete-root] 'rm -rf /': built-in floor: 'rm' deletes recursively the protected path '/'" ||
	fail "reason: $(cat err.txt)"
grep -qF "only the site policy file" err.txt || fail "allow note: $(cat err.txt)"
# argv form is judged word by word.
"$VIGIL" exec -- rm -rf / </dev/null 2>/dev/null; [ $? -eq 3 ] || fail "argv deny"
"$VIGIL" exec --backend nope -- true </dev/null 2>err.txt; [ $? -eq 2 ] || fail "bad backend"
grep -q "unknown backend 'nope' (valid: local" err.txt || fail "backend list"
"$VIGIL" exec --timeout soon -- true </dev/null 2>/dev/null; [ $? -eq 2 ] || fail "bad timeout"

# Allowed commands run in the local backend.
out=$("$VIGIL" exec -- 'echo hello; exit 7' </dev/null 2>err.txt); rc=$?
[ $rc -eq 7 ] || fail "exit code $rc: $(cat err.txt)"
[ "$out" = hello ] || fail "output: $out"
"$VIGIL" exec -- sh -c 'exit 5' </dev/null; [ $? -eq 5 ] || fail "argv run"
"$VIGIL" exec --timeout 1 -- 'sleep 30' </dev/null 2>/dev/null; rc=$?
[ $rc -eq 124 ] || fail "timeout rc $rc"
echo "all passed"

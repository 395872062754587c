#!/bin/sh
# isolation.network none on Daytona: vigil asks for networkBlockAll when
# it creates the sandbox, for a run and for a session, and the fake
# (tests/harness/fake-daytona.py, which runs such a sandbox's commands
# in a network namespace of their own) shows the task no way out: a
# server on the host's loopback that the same command reaches without
# it is unreachable; a session's commands likewise.  Needs root (the
# fake's namespace) and curl.
PROVIDER=daytona
. "$(dirname "$0")/cloud-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: the fake's network namespace needs root"; exit 77; }
command -v curl >/dev/null || { echo "skipped: curl is needed"; exit 77; }
trap 'kill $(cat "$W/srv.pid" 2>/dev/null) 2>/dev/null; stop_fake; rm -rf "$W"' EXIT
A=$("$top/tests/harness/http-hello-up" "$W/port" "$W/srv.pid") || fail "no server"
start_fake
get="'curl -s --max-time 5 http://127.0.0.1:$A/ || echo unreachable'"
mf open "$get"
run_task open
expect_eq "without none: state" "SUCCEEDED 0 None" "$ST"
expect_eq "without none: reached" "hello" "$OUT"
mf blocked "$get" "isolation:
  network: none"
run_task blocked
expect_eq "none: state" "SUCCEEDED 0 None" "$ST"
expect_eq "none: no way out" "unreachable" "$OUT"
# A session's sandbox too: each command finds no way out.
cat >"$W/s.yaml" <<Y
backend: daytona
daytona:
  endpoint: $EP
isolation:
  network: none
Y
id=$("$VIGIL" session start -f "$W/s.yaml" 2>"$W/s.err") ||
    fail "session start: $(cat "$W/s.err")"
out=$("$VIGIL" exec --session "$id" -- "curl -s --max-time 5 http://127.0.0.1:$A/ || echo unreachable" </dev/null 2>&1)
"$VIGIL" session stop "$id" >/dev/null 2>&1
expect_eq "session: no way out" "unreachable" "$out"
pass
PY
)"
pass

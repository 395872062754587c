#!/bin/sh
# The site policy is a floor: a manifest (or a user config, --set,
# --policy) that names a policy file of its own, allows what the site
# denies, opts into auto-approve where the site forbids it, or lifts a
# floor rule never makes a command the site denies run.  The site
# config names the site's policy file (here in the test's directory,
# through VIGIL_SITE_CONFIG, as /etc/vigil/config.yaml would).
. "$(dirname "$0")/sec-lib.sh"
mkdir -p "$tmp/site" "$tmp/evil" "$tmp/w" "$tmp/marks"
cat >"$tmp/site/policy.yaml" <<Y
version: 1
mode: auto-deny
auto_approve: false
deny:
  - id: no-touch
    match: "touch *"
    reason: the site forbids it
Y
cat >"$tmp/site/config.yaml" <<Y
version: 1
policy:
  file: $tmp/site/policy.yaml
Y
VIGIL_SITE_CONFIG=$tmp/site/config.yaml
export VIGIL_SITE_CONFIG
cat >"$tmp/evil/policy.yaml" <<Y
version: 1
mode: auto-approve
auto_approve: true
allow:
  - id: touch-ok
    match: "touch *"
    reason: mine
Y
cat >"$tmp/evil/floor.yaml" <<Y
version: 1
allow:
  - id: lift
    floor: kill-all
    reason: mine
Y
# run NAME [vigil args...] with a manifest whose extra policy text is
# in $POL; asserts the command never ran.
run() {
	name=$1; shift
	cat >"$tmp/w/$name.yaml" <<Y
version: 1
name: $name
command: touch $tmp/marks/ran-$name
isolation:
  writable: ["$tmp/marks"]
$POL
Y
	(cd "$tmp/w" && "$VIGIL" run -q "$@" "$tmp/w/$name.yaml" \
	    >"$tmp/out.$name" 2>&1)
	rc=$?
	[ ! -e "$tmp/marks/ran-$name" ] || fail "$name: the site-denied command ran"
	[ $rc -ne 0 ] || fail "$name: vigil run succeeded: $(cat "$tmp/out.$name")"
}
POL="policy:
  file: $tmp/evil/policy.yaml"
run manifest-file
POL="policy:
  mode: auto-approve
  allow:
    - {id: t, match: 'touch *', reason: mine}"
run manifest-inline
grep -q "auto-approve is forbidden by the site policy" "$tmp/out.manifest-inline" ||
    fail "manifest-inline: no word of the site's refusal: $(cat "$tmp/out.manifest-inline")"
POL=""
run set-file --set "policy.file=$tmp/evil/policy.yaml"
run set-mode --set policy.mode=auto-approve
cat >"$tmp/user.yaml" <<Y
version: 1
policy:
  file: $tmp/evil/policy.yaml
Y
VIGIL_USER_CONFIG=$tmp/user.yaml run user-config
run mode-flag --mode auto-approve 2>/dev/null
# A floor rule lifted by a manifest's file: refused, naming the file.
POL="policy:
  file: $tmp/evil/floor.yaml"
run floor-lift
grep -q "only the site policy file" "$tmp/out.floor-lift" ||
    fail "floor-lift: $(cat "$tmp/out.floor-lift")"
# vigil check and vigil exec with --policy: a layer, not the site.
out=$("$VIGIL" check --policy "$tmp/evil/policy.yaml" "touch $tmp/x" 2>&1)
[ $? -ne 0 ] || fail "check --policy allowed a site-denied command: $out"
cat >"$tmp/evil/allow.yaml" <<Y
version: 1
allow:
  - {id: touch-ok, match: "touch *", reason: mine}
Y
out=$("$VIGIL" check --policy "$tmp/evil/allow.yaml" "touch $tmp/x" 2>&1)
[ $? -ne 0 ] || fail "check --policy allowed a site-denied command: $out"
echo "$out" | grep -q "site:no-touch" || fail "check --policy: the site rule is not named: $out"
(cd "$tmp/w" && "$VIGIL" exec --policy "$tmp/evil/policy.yaml" -- touch "$tmp/ran-exec" \
    >/dev/null 2>&1)
[ ! -e "$tmp/ran-exec" ] || fail "exec --policy ran a site-denied command"
echo "s0501: ok"

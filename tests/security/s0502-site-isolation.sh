#!/bin/sh
# Isolation the site requires (isolation.required in the site config)
# is a minimum: a manifest, --set or a user config asking for less is
# refused before anything runs, naming the key and the site's level.
. "$(dirname "$0")/sec-lib.sh"
mkdir -p "$tmp/site" "$tmp/w"
cat >"$tmp/site/config.yaml" <<Y
version: 1
isolation:
  level: strict
  required: true
Y
VIGIL_SITE_CONFIG=$tmp/site/config.yaml
export VIGIL_SITE_CONFIG
victim=$tmp/victim
mkdir "$victim"
mk() {
	cat >"$tmp/w/$1.yaml" <<Y
version: 1
name: $1
command: touch $victim/ran-$1
$2
Y
}
check() {
	name=$1; shift
	(cd "$tmp/w" && "$VIGIL" run -q "$@" "$tmp/w/$name.yaml" \
	    >"$tmp/out.$name" 2>&1)
	rc=$?
	[ $rc -ne 0 ] || fail "$name: vigil run succeeded"
	[ ! -e "$victim/ran-$name" ] || fail "$name: the command ran"
	grep -q "is below the level the site requires ('strict'" \
	    "$tmp/out.$name" || fail "$name: $(cat "$tmp/out.$name")"
}
mk none "isolation:
  level: none"
check none
grep -q "none.yaml:[0-9]*:[0-9]*: error: isolation.level 'none'" "$tmp/out.none" ||
    fail "the error does not name the file and line: $(cat "$tmp/out.none")"
mk standard "isolation:
  level: standard
  required: false"
check standard
mk plain ""
check plain --set isolation.level=none
cat >"$tmp/user.yaml" <<Y
version: 1
isolation:
  level: none
Y
VIGIL_USER_CONFIG=$tmp/user.yaml check plain
# What the site asks for runs (strict: it writes its task directory).
cat >"$tmp/w/ok.yaml" <<Y
version: 1
name: ok
command: touch "\$VIGIL_TASK_DIR/ran"
Y
(cd "$tmp/w" && "$VIGIL" run -q "$tmp/w/ok.yaml" >"$tmp/out.ok" 2>&1) ||
    fail "a manifest at the site's level failed: $(cat "$tmp/out.ok")"
echo "s0502: ok"

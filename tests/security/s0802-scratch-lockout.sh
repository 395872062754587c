#!/bin/sh
# No user can lock another out of scratch, or make her use a directory of
# hers.  A site's shared base (root's, 1777): mallory takes the name of
# alice's directory in it first (BASE/vgsec-alice, world-writable): alice's
# task gets a private directory of her own beside it, never mallory's.
# A base mallory made first (before the site did): alice's and root's
# runs pass over it (told) and still run, in a directory of their own.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"

# run_as WHO BASE: a task that records its scratch directory.
run_as() {
	who=$1 base=$2 out=$tmp/out-$who
	cat >"$tmp/s-$who.yaml" <<Y
version: 1
name: scratch-lockout
scratch:
  path: $base
command: |
  echo "\$VIGIL_SCRATCH_DIR" > "\$VIGIL_SCRATCH_DIR/where"
  cat "\$VIGIL_SCRATCH_DIR/where"
Y
	chmod 644 "$tmp/s-$who.yaml"
	rm -f "$out"
	if [ "$who" = root ]; then
		as=""
	else
		as=as_alice
	fi
	$as "$VG" run -q "$tmp/s-$who.yaml" >"$out" 2>&1 ||
	    fail "$who's run failed with scratch.path $base: $(cat "$out")"
	id=$($as "$VG" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
	$as "$VG" logs "$id" | grep '^/' | tail -n 1
}

# Owner of the directory d, as a uid.
owner() { stat -c %u "$1"; }

# 1. The site's base; mallory squats alice's name in it.
site=$tmp/site-scratch
mkdir -m 1777 "$site"
chmod 1777 "$site"
as_mallory mkdir -m 777 "$site/$U_ALICE"
as_mallory chmod 777 "$site/$U_ALICE"
d=$(run_as alice "$site")
case "$d" in
"$site/$U_ALICE".*/*) ;;
*) fail "alice's scratch '$d' is not a private directory beside the squatted name" ;;
esac
[ "$(owner "$site/$U_ALICE")" = "$MALLORY_UID" ] || fail "mallory's dir changed owner"
[ -z "$(ls -A "$site/$U_ALICE")" ] || fail "alice wrote into mallory's directory"
top=${d#"$site/"}; top=$site/${top%%/*}
[ "$(owner "$top")" = "$ALICE_UID" ] || fail "alice's scratch $top is not hers"

# 2. A base mallory made first: alice and root pass over it.
theirs=$tmp/theirs
as_mallory mkdir -m 1777 "$MALLORY_DIR/base"
chmod 711 "$MALLORY_DIR"
as_mallory chmod 1777 "$MALLORY_DIR/base"
mv "$MALLORY_DIR/base" "$theirs"
for who in alice root; do
	d=$(run_as $who "$theirs")
	case "$d" in
	"$theirs"/*) fail "$who's scratch '$d' is in mallory's base" ;;
	/*) ;;
	*) fail "$who's run printed no scratch directory" ;;
	esac
done
[ -z "$(ls -A "$theirs")" ] || fail "something was made in mallory's base: $(ls -A "$theirs")"
echo ok

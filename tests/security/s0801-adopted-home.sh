#!/bin/sh
# A state directory someone else made is not adopted.  The victim's cron
# job keeps its state in a shared place (VIGIL_HOME=/tmp/...); the
# attacker makes that directory first, world-writable, with a database
# of her own whose ended run names the victim's precious directory as
# its run directory.  The victim's `vigil gc` (alice's, then root's)
# must refuse the state directory, naming its owner and mode, and
# delete nothing.  A home of her own on the way through a directory the
# attacker owns is refused too; gc of a real database whose run
# directory column was changed leaves that directory alone.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3 command"

cat >"$tmp/run.yaml" <<'Y'
version: 1
name: planted
command: "true"
Y
chmod 644 "$tmp/run.yaml"

# plant DIR VICTIM: mallory makes DIR (0777) with an ended run whose
# directory column says VICTIM.
plant() {
	as_mallory env VIGIL_HOME="$1" "$VG" run -q "$tmp/run.yaml" \
	    >/dev/null 2>&1 || fail "mallory's own run failed"
	as_mallory sqlite3 "$1/vigil.db" \
	    "UPDATE runs SET dir='$2', ended=1, created=1" ||
	    fail "mallory could not edit her database"
	as_mallory chmod -R a+rwX "$1"
}

for who in alice root; do
	home=/tmp/vgsec-state-$who-$$
	victim=$tmp/precious-$who
	mkdir -p "$victim/keep"
	echo data >"$victim/keep/file"
	[ $who = alice ] && chown -R "$U_ALICE" "$victim"
	rm -rf "$home"
	plant "$home" "$victim"
	if [ $who = alice ]; then
		as_alice env VIGIL_HOME="$home" "$VG" gc --older-than 0 \
		    >"$tmp/gc.$who" 2>&1
	else
		VIGIL_HOME=$home "$VG" gc --older-than 0 >"$tmp/gc.$who" 2>&1
	fi
	rc=$?
	rm -rf "$home"
	[ -f "$victim/keep/file" ] || fail "$who's gc deleted '$victim' \
through a database mallory planted: $(cat "$tmp/gc.$who")"
	[ $rc -ne 0 ] || fail "$who's gc adopted mallory's state directory"
	grep -q "VIGIL_HOME '$home' is owned by $U_MALLORY (uid $MALLORY_UID), mode 0777" \
	    "$tmp/gc.$who" || fail "$who's refusal does not name the owner \
and mode: $(cat "$tmp/gc.$who")"
done

# A home of alice's own, under a directory mallory owns: refused.
as_mallory mkdir -m 755 "$MALLORY_DIR/pub"
chmod 711 "$MALLORY_DIR"
as_mallory mkdir -m 777 "$MALLORY_DIR/pub/alice"
as_alice mkdir -m 700 "$MALLORY_DIR/pub/alice/state"
as_alice env VIGIL_HOME="$MALLORY_DIR/pub/alice/state" "$VG" status \
    >"$tmp/st" 2>&1 && fail "alice adopted a home under mallory's directory"
grep -q "on its way is owned by $U_MALLORY" "$tmp/st" ||
    fail "the refusal does not say whose directory is on the way: $(cat "$tmp/st")"

# Alice's own database with a run directory column pointing elsewhere
# (a database restored from elsewhere, or edited): gc leaves it alone.
victim=$tmp/precious-column
mkdir -p "$victim"
chown "$U_ALICE" "$victim"
as_alice "$VG" run -q "$tmp/run.yaml" >/dev/null 2>&1 || fail "alice's run failed"
as_alice sqlite3 "$ALICE_DIR/.vigil/vigil.db" "UPDATE runs SET dir='$victim'"
as_alice "$VG" gc --older-than 0 >"$tmp/gc.col" 2>&1
[ -d "$victim" ] || fail "gc removed the directory a changed column named"
grep -q "is not vigil's" "$tmp/gc.col" || fail "gc did not say why it left \
the directory: $(cat "$tmp/gc.col")"
echo "ok"

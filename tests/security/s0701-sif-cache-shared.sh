#!/bin/sh
# A group-shared SIF cache serves only what it verified.  alice (the
# victim, and root) and mallory (the attacker) share a cache directory
# (root:vgsec-share, 2775) on a login node; real SIF images are served
# by a loopback HTTP server.  mallory:
#  (a) writes her image under the content address of alice's image
#      before alice pulls it;
#  (b) replaces alice's pulled image with hers (a rename in the group's
#      directory, the modification time kept);
#  (c) rewrites the refs/ record of alice's reference to name her image
#      (itself cached soundly under its own address);
#  (d) plants a FIFO at a record's name;
#  (e) keeps a forged pull lock fresh;
# and alice pulls with umask 077.  Each time alice's (and root's)
# resolve gives alice's image, quickly, `vigil cache verify` reports
# what mallory did, and the cache stays readable by the group.
# Credentials in an image URL are kept nowhere.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"
"$sec_dir/../../scripts/deps.sh" siftool squashfs-tools python3 >/dev/null 2>&1 ||
    skip "siftool and squashfs-tools could not be installed"
command -v siftool >/dev/null 2>&1 || skip "no siftool"

mkdir -p "$tmp/srv"
for n in a m; do
	"$sec_dir/../harness/mksif" "$tmp/srv/$n.sif" "$n"
done
chmod -R a+rX "$tmp/srv"
da=$(sha256sum "$tmp/srv/a.sif" | cut -c1-64)
dm=$(sha256sum "$tmp/srv/m.sif" | cut -c1-64)
python3 "$sec_dir/../harness/sif-http.py" "$tmp/srv" "$tmp/port" "$tmp/http.log" &
srv=$!
holder=""
sec_cleanup() {
	kill $srv $holder 2>/dev/null
	pkill -u "$U_MALLORY" 2>/dev/null
	rm -rf "$tmp"
}
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -s "$tmp/port" ] || fail "the http server did not start"
A=http://127.0.0.1:$(cat "$tmp/port")/a.sif
F=http://127.0.0.1:$(cat "$tmp/port")/fresh/a.sif
U=http://127.0.0.1:$(cat "$tmp/port")/umask/a.sif

C=$tmp/cache
mkdir -p "$C"
chgrp "$G_SHARE" "$C"
chmod 2775 "$C"
# pull WHO REF: the path the cache gives WHO for REF (20 s at most).
pull() {
	who=$1; shift
	if [ "$who" = root ]; then
		VIGIL_SIF_CACHE=$C timeout 20 "$VG" cache pull "$@"
	else
		as_user "vgsec-$who" "$tmp/$who-home" env VIGIL_SIF_CACHE="$C" \
		    timeout 20 "$VG" cache pull "$@"
	fi
}
for u in alice mallory; do
	mkdir -p "$tmp/$u-home"
	chown "vgsec-$u" "$tmp/$u-home"
	chmod 700 "$tmp/$u-home"
done
# served WHO REF: fails unless WHO's resolve gives alice's image.
served() {
	out=$(pull "$@" 2>"$tmp/pull.err") || fail "$1's pull of $2 failed: $(cat "$tmp/pull.err")"
	path=${out##* }
	[ "$(sha256sum "$path" | cut -c1-64)" = "$da" ] ||
	    fail "$1 was given another image than alice's for $2 ($out)"
	echo "$path"
}

# (a) mallory writes her image at alice's address first; the sha256
# directory is made by mallory's own pull of her image.
pull mallory "http://127.0.0.1:$(cat "$tmp/port")/m.sif" >/dev/null ||
    fail "mallory's own pull failed"
as_mallory cp "$tmp/srv/m.sif" "$C/sha256/$da.sif"
p=$(served alice "$A@sha256:$da") || { echo "$p"; exit 1; }
p=$(served root "$A@sha256:$da") || { echo "$p"; exit 1; }

# (b) mallory replaces the pulled image (rename; mtime kept).
as_mallory cp "$tmp/srv/m.sif" "$C/tmp/evil"
as_mallory touch -r "$p" "$C/tmp/evil"
as_mallory mv -f "$C/tmp/evil" "$p"
[ "$(sha256sum "$p" | cut -c1-64)" = "$dm" ] || fail "(b) the attack did not take"
as_alice env VIGIL_SIF_CACHE="$C" "$VG" cache verify >"$tmp/verify" 2>&1
grep -q "^tampered .*is not the image its address names" "$tmp/verify" ||
    fail "(b) verify did not report the replaced image: $(cat "$tmp/verify")"
served alice "$A@sha256:$da" >/dev/null
served alice "$A" >/dev/null

# (c) mallory rewrites the refs record of $A to name her image.
ref=$(grep -l "^ref $A\$" "$C"/refs/*.ref | head -n 1)
[ -n "$ref" ] || fail "no refs record for $A"
sed "s/^digest .*/digest $dm/" "$ref" >"$tmp/evil.ref"
chmod 644 "$tmp/evil.ref"
as_mallory cp "$tmp/evil.ref" "$C/refs/new.tmp"
as_mallory mv -f "$C/refs/new.tmp" "$ref"
served alice "$A" >/dev/null
as_mallory cp "$tmp/evil.ref" "$C/refs/new.tmp"
as_mallory mv -f "$C/refs/new.tmp" "$ref"
served root "$A" >/dev/null
as_mallory cp "$tmp/evil.ref" "$C/refs/new.tmp"
as_mallory mv -f "$C/refs/new.tmp" "$ref"
as_alice env VIGIL_SIF_CACHE="$C" "$VG" cache verify >"$tmp/verify" 2>&1
grep -q "^untrusted .*written by $U_MALLORY (uid $MALLORY_UID), who is not in cache.trusted_writers" "$tmp/verify" ||
    fail "(c) verify did not report mallory's record: $(cat "$tmp/verify")"

# (d) a FIFO at the record's name: no hang.
as_mallory rm -f "$ref"
as_mallory mkfifo "$ref"
served alice "$A" >/dev/null
rm -f "$ref"

# (e) a forged lock kept fresh: alice's pull does not wait for it.
# The lock's name: sha256 of "ARCH REF" (ARCH the SIF code: 02 x86-64).
case $(uname -m) in x86_64) arch=02 ;; aarch64) arch=04 ;; *) arch=?? ;; esac
lock=$C/locks/$(printf '%s %s' "$arch" "$F" | sha256sum | cut -c1-64).lock
as_mallory sh -c "printf 'host %s\npid %s\n' \"\$(hostname)\" \$\$ > '$lock'; while :; do touch -c '$lock'; sleep 1; done" &
holder=$!
sleep 1
[ -f "$lock" ] || fail "(e) mallory's lock was not made"
start=$(date +%s)
served alice "$F" >/dev/null
kill $holder 2>/dev/null
[ $(( $(date +%s) - start )) -lt 15 ] || fail "(e) alice waited for mallory's lock"
[ ! -e "$lock" ] || [ "$(stat -c %U "$lock")" != "$U_MALLORY" ] ||
    fail "(e) mallory's lock was never met (its name is not the pull's)"

# (f) alice's umask 077: what she adds stays readable by the group.
as_user "$U_ALICE" "$tmp/alice-home" sh -c "umask 077; VIGIL_SIF_CACHE='$C' '$VG' cache pull '$U' >/dev/null" ||
    fail "(f) alice's pull failed"
as_mallory sh -c "cat '$C'/refs/*.ref >/dev/null && ls '$C/sha256' >/dev/null" ||
    fail "(f) alice's umask made the cache unreadable to the group"

# Credentials in the URL are kept nowhere.
creds="http://vgsecuser:vgsecpass@127.0.0.1:$(cat "$tmp/port")/a.sif?X-Amz-Signature=vgsecsig"
pull alice "$creds" >/dev/null 2>&1 || fail "the pull with credentials failed"
as_alice env VIGIL_SIF_CACHE="$C" "$VG" cache list >"$tmp/list" 2>&1
! grep -rq "vgsecpass\|vgsecsig" "$C" "$tmp/list" ||
    fail "a credential was kept: $(grep -rl "vgsecpass\|vgsecsig" "$C" "$tmp/list")"
echo ok

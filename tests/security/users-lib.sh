# users-lib.sh - sourced after sec-lib.sh (as . "$sec_dir/users-lib.sh") by the shared-host attacks
# (a login node with many users).  Gives two ordinary users and a group
# they share:
#   vgsec-alice    the victim (runs vigil as herself)
#   vgsec-mallory  the attacker (an ordinary user of the same host)
#   vgsec-share    their shared group (a group-shared cache, scratch)
# made once per host (useradd under a lock, so parallel suites agree)
# and left for the next run; a copy of $VIGIL (and its vigil-shim) every user can execute
# at $VG (the build tree may sit under a 0700 home); private directories
# $ALICE_DIR and $MALLORY_DIR (0700, their own) under $tmp; and
#   as_alice CMD...    as_mallory CMD...
# running CMD as that user (her groups, HOME at her private directory,
# umask 022), root's environment otherwise cleared but PATH.
U_ALICE=vgsec-alice
U_MALLORY=vgsec-mallory
G_SHARE=vgsec-share

command -v useradd >/dev/null 2>&1 || skip "useradd is missing: no ordinary users can be made here"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is missing"

users_make() {
	getent group "$G_SHARE" >/dev/null 2>&1 ||
	    groupadd "$G_SHARE" 2>/dev/null ||
	    getent group "$G_SHARE" >/dev/null 2>&1 || return 1
	for u in "$U_ALICE" "$U_MALLORY"; do
		id "$u" >/dev/null 2>&1 ||
		    useradd -M -d /nonexistent -s /bin/sh -G "$G_SHARE" "$u" \
		    2>/dev/null || id "$u" >/dev/null 2>&1 || return 1
		id -nG "$u" | tr ' ' '\n' | grep -qx "$G_SHARE" ||
		    usermod -a -G "$G_SHARE" "$u" || return 1
	done
}
if command -v flock >/dev/null 2>&1; then
	# (a redirection of exec's own would stay for the whole script)
	{ exec 9>/run/vgsec-users.lock; } 2>/dev/null ||
	    exec 9>/tmp/vgsec-users.lock
	flock 9
	users_make || fail "could not make the users $U_ALICE, $U_MALLORY"
	flock -u 9
	exec 9>&-
else
	users_make || fail "could not make the users $U_ALICE, $U_MALLORY"
fi
ALICE_UID=$(id -u "$U_ALICE")
MALLORY_UID=$(id -u "$U_MALLORY")
SHARE_GID=$(getent group "$G_SHARE" | cut -d: -f3)

mkdir -p "$tmp/bin"
cp "$VIGIL" "$tmp/bin/vigil"
# The task launcher is looked for next to the binary.
[ -f "$(dirname "$VIGIL")/vigil-shim" ] &&
    cp "$(dirname "$VIGIL")/vigil-shim" "$tmp/bin/vigil-shim"
chmod -R a+rX "$tmp/bin"
VG=$tmp/bin/vigil
ALICE_DIR=$tmp/alice
MALLORY_DIR=$tmp/mallory
mkdir -p "$ALICE_DIR" "$MALLORY_DIR"
chown "$U_ALICE:$U_ALICE" "$ALICE_DIR"
chown "$U_MALLORY:$U_MALLORY" "$MALLORY_DIR"
chmod 700 "$ALICE_DIR" "$MALLORY_DIR"

# as_user USER DIR CMD... - runs CMD as USER with HOME=DIR.
as_user() {
	u=$1 d=$2
	shift 2
	( umask 022; cd "$d" && setpriv --reuid="$u" --regid="$u" \
	    --init-groups --inh-caps=-all -- env -i PATH="$PATH" \
	    HOME="$d" USER="$u" LOGNAME="$u" VIGIL_HOME="$d/.vigil" \
	    ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
	    ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} "$@" )
}
as_alice() { as_user "$U_ALICE" "$ALICE_DIR" "$@"; }
as_mallory() { as_user "$U_MALLORY" "$MALLORY_DIR" "$@"; }

#!/bin/sh
# The ssh backend never adopts a remote directory another remote user
# could change.  On the remote host (a private sshd on loopback, logged
# into as root), mallory owns a world-writable directory that the
# manifest's remote_dir lies in, and plants a symbolic link as the
# remote_dir of another manifest, pointing into a root-only directory.
# Both runs are refused before anything is made there, the reason
# naming the owner and mode; a remote_dir in a sticky directory works.
[ "$(id -u)" = 0 ] || { echo "the hostile suite runs as root"; exit 77; }
. "$(dirname "$0")/../integration/ssh-lib.sh"
sec_dir=$(cd "$(dirname "$0")" && pwd)
chmod 755 "$tmp"
skip() { echo "$*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }
# users-lib.sh wants sec-lib's fail(); ssh-lib's $fail is a variable.
fail() { die "$@"; }
. "$sec_dir/users-lib.sh"

# run_at NAME DIR: runs `true` with remote_dir DIR (manifest $tmp/NAME.yaml).
run_at() {
	manifest "$tmp/$1.yaml" 'command: "true"'
	sed -i "s|remote_dir: .*|remote_dir: $2|" "$tmp/$1.yaml"
	vrun "$tmp/$1.yaml"
}

# (a) remote_dir inside mallory's world-writable directory.
mkdir -m 777 "$tmp/open"
chmod 777 "$tmp/open"
chown "$U_MALLORY" "$tmp/open"
run_at a "$tmp/open/vigil"
[ "$rc" -ne 0 ] || die "a run adopted a remote directory mallory can change"
task_line | grep -q "remote directory '$tmp/open' (owner uid $MALLORY_UID, mode 0777) may be written by others and is not sticky" ||
    die "(a) the reason does not say why: $(task_line)"
[ ! -e "$tmp/open/vigil" ] || die "(a) something was made in mallory's directory"

# (b) remote_dir a link mallory planted in a sticky directory.
mkdir -m 1777 "$tmp/pub" "$tmp/rootonly"
chmod 1777 "$tmp/pub"
chmod 700 "$tmp/rootonly"
as_mallory ln -s "$tmp/rootonly" "$tmp/pub/vigil"
run_at b "$tmp/pub/vigil/x"
[ "$rc" -ne 0 ] || die "a run went through mallory's link"
task_line | grep -q "remote '$tmp/pub/vigil' is a symbolic link owned by uid $MALLORY_UID" ||
    die "(b) the reason does not say why: $(task_line)"
[ -z "$(ls -A "$tmp/rootonly")" ] || die "(b) something was made through the link"

# (c) a remote_dir of root's own in the sticky directory: runs.
run_at c "$tmp/pub/mine"
[ "$rc" -eq 0 ] || die "(c) a sound remote_dir failed: $(task_line) $(cat "$tmp/run.err")"
echo ok

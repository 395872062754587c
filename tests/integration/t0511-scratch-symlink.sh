#!/bin/sh
# A symlink planted on a shared scratch filesystem cannot redirect a task's
# scratch directory: at every level, the backend refuses and names it, and
# nothing is created at the link's target.  Runs through the singularity
# backend's own scratch creation (no container is started).
set -u
fail() { echo "FAIL: $*"; exit 1; }
expect() { [ "$1" = "$2" ] || fail "$3: expected
'$2', got
'$1'"; }
DRIVER=$(dirname "$VIGIL")/tests/sing-driver
[ -x "$DRIVER" ] || fail "$DRIVER is missing (make tests builds it)"
tmp=$(mktemp -d /tmp/vigil-t0511.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
VIGIL_HOME=$tmp/home
export VIGIL_HOME
base=$tmp/scratch
mkdir -p "$base" "$tmp/task" "$tmp/victim"
touch "$tmp/image.sif"
drv() {
	"$DRIVER" --binary /bin/true --image "$tmp/image.sif" \
	    --scratch-path "$base" --run r1 "$tmp/task" -- true
}

# <base>/vigil is a link
ln -s "$tmp/victim" "$base/vigil"
expect "$(drv)" "error: scratch: '$base/vigil' is a symbolic link; scratch directories are never created through one" "vigil link"
rm "$base/vigil"
# <base>/vigil/<run> is a link
mkdir -m 700 "$base/vigil"
ln -s "$tmp/victim" "$base/vigil/r1"
expect "$(drv)" "error: scratch: '$base/vigil/r1' is a symbolic link; scratch directories are never created through one" "run link"
rm "$base/vigil/r1"
# <base>/vigil/<run>/<task> is a link
mkdir -m 700 "$base/vigil/r1"
ln -s "$tmp/victim" "$base/vigil/r1/0"
expect "$(drv)" "error: scratch: '$base/vigil/r1/0' is a symbolic link; scratch directories are never created through one" "task link"
rm "$base/vigil/r1/0"
# nothing was created where the links pointed
[ -z "$(ls -A "$tmp/victim")" ] || fail "something was created in the victim dir"
# a directory of another user on the way
mkdir -p "$base/vigil/r2"
chown 4321 "$base/vigil/r2"
out=$("$DRIVER" --binary /bin/true --image "$tmp/image.sif" \
    --scratch-path "$base" --run r2 "$tmp/task" -- true)
expect "$out" "error: scratch: '$base/vigil/r2' is owned by uid 4321, not by you (uid $(id -u)); refusing to use it" "foreign dir"
# the free-space preflight (scratch.min_free is not settable from the
# driver: the unit tests cover it; here the default 1 GiB passes)
out=$("$DRIVER" --binary /bin/true --image "$tmp/image.sif" \
    --scratch-path "$base" --run r3 "$tmp/task" -- true)
expect "$out" "state=SUCCEEDED exit=0 signal=0 reason=" "fine scratch"
[ ! -e "$base/vigil/r3" ] || fail "scratch of a succeeded task kept"
echo "t0511: ok"

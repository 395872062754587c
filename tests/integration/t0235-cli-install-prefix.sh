#!/bin/sh
# t0235-cli-install-prefix: `make install` into a prefix other than the
# one compiled in (PREFIX, DESTDIR, then the tree moved elsewhere) gives
# a vigil whose local tasks start: vigil finds vigil-shim in
# ../libexec/vigil beside its own binary.  The moved install is run by an
# ordinary user (nobody) when the test runs as root.
set -u
fail() { echo "FAIL: $*"; exit 1; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(dirname "$(realpath "$VIGIL")")
case $(basename "$dir") in
release) mk= ;;
san) mk=SANITIZE=address,undefined ;;
*) echo "not a build/release or build/san binary: $dir"; exit 77 ;;
esac
libexec=$(strings "$VIGIL" | grep -m 1 '/libexec/vigil$') ||
	fail "no libexec directory in the binary"
[ ! -e "$libexec/vigil-shim" ] || {
	echo "a shim is installed in $libexec: the test cannot tell it apart"
	exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"

cat >"$tmp/m.yaml" <<'YAML'
version: 1
name: installed
matrix:
  i: [1, 2]
command: 'echo task ${{ matrix.i }}'
YAML
chmod 0644 "$tmp/m.yaml"

# run VIGIL HOME: a local run of m.yaml with the installed binary.
run() {
	out=$(cd "$tmp" && VIGIL_HOME=$2 "$1" run -q "$tmp/m.yaml" 2>&1) ||
		fail "$1 run: $out"
}

# DESTDIR staging, the prefix as packagers use it.
make -s -C "$root" $mk install PREFIX=/opt/vg DESTDIR="$tmp/stage" \
	>"$tmp/make.log" 2>&1 || fail "make install: $(tail -5 "$tmp/make.log")"
bin=$tmp/stage/opt/vg/bin/vigil
[ -x "$bin" ] && [ -x "$tmp/stage/opt/vg/libexec/vigil/vigil-shim" ] ||
	fail "make install DESTDIR= did not install vigil and vigil-shim"
doc=$("$bin" doctor --backend local)
echo "$doc" | grep -qxF "local: task launcher: ok ($tmp/stage/opt/vg/libexec/vigil/vigil-shim)" ||
	fail "doctor of the staged install: $doc"
run "$bin" "$tmp/state-stage"

# A user's own prefix, then moved: nothing is compiled in for it.
make -s -C "$root" $mk install PREFIX="$tmp/local" \
	>"$tmp/make.log" 2>&1 || fail "make install: $(tail -5 "$tmp/make.log")"
mv "$tmp/local" "$tmp/moved"
bin=$tmp/moved/bin/vigil
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
    id nobody >/dev/null 2>&1; then
	install -d -o nobody -m 0700 "$tmp/state-user"
	out=$(cd "$tmp" && VIGIL_HOME=$tmp/state-user HOME=$tmp/state-user \
	    setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	    "$bin" run -q "$tmp/m.yaml" 2>&1) ||
		fail "the moved install as nobody: $out"
	user=nobody
else
	run "$bin" "$tmp/state-user"
	user=$(id -un)
fi
echo "ok ($user ran the moved install)"

#!/bin/sh
# t0209-cli-lazy-libs: vigil is not linked against libcurl, libssh or
# libcrypto; it loads each on its first call.  A local run never loads
# them (it works with VIGIL_LIBCURL and VIGIL_LIBSSH naming nothing); a
# docker or ssh run with no library to load is refused as one this host
# cannot run (exit 6), saying which library and how to fix it, and
# starts nothing; `vigil doctor`
# says the ssh backend's library is missing.
set -u
fail() { echo "FAIL: $*"; exit 1; }
VIGIL_HOME=$(mktemp -d); export VIGIL_HOME
trap 'rm -rf "$VIGIL_HOME"' EXIT

ldd "$VIGIL" | grep -E 'libcurl|libssh|libcrypto' &&
	fail "vigil is linked against a library it loads on first use"

cat >"$VIGIL_HOME/local.yaml" <<'YAML'
version: 1
name: nocurl
command: 'echo fine'
YAML
VIGIL_LIBCURL=/nonexistent/libcurl.so.4 VIGIL_LIBSSH=/nonexistent/libssh.so.4 "$VIGIL" run -q \
    "$VIGIL_HOME/local.yaml" || fail "a local run needed libcurl"

cat >"$VIGIL_HOME/docker.yaml" <<'YAML'
version: 1
name: nocurl
backend: docker
image: alpine:3
command: 'true'
YAML
# Without it this host cannot run the manifest: refused (exit 6) with
# what to install.
err=$(VIGIL_LIBCURL=/nonexistent/libcurl.so.4 DOCKER_HOST=unix:///nonexistent \
    "$VIGIL" run "$VIGIL_HOME/docker.yaml" 2>&1)
rc=$?
[ $rc -eq 6 ] || fail "docker run without libcurl exited $rc: $err"
echo "$err" | grep -qF "  docker: cannot load libcurl.so.4: /nonexistent/libcurl.so.4: cannot open shared object file: No such file or directory (install libcurl4, or name the library in VIGIL_LIBCURL)" ||
	fail "error was: $err"

# With the library it is found by its soname and works (a refused
# connection, not a load error).
err=$(DOCKER_HOST=unix:///nonexistent "$VIGIL" run "$VIGIL_HOME/docker.yaml" 2>&1)
echo "$err" | grep -q "cannot load libcurl" && fail "libcurl.so.4 not loaded: $err"
echo "$err" | grep -q "cannot connect" || fail "no engine, yet: $err"

cat >"$VIGIL_HOME/ssh.yaml" <<'YAML'
version: 1
name: nossh
backend: ssh
ssh:
  host: 127.0.0.1
  port: 1
command: 'true'
YAML
err=$(VIGIL_LIBSSH=/nonexistent/libssh.so.4 "$VIGIL" run "$VIGIL_HOME/ssh.yaml" 2>&1)
rc=$?
[ $rc -eq 6 ] || fail "ssh run without libssh exited $rc: $err"
echo "$err" | grep -qF "  ssh: cannot load libssh.so.4: /nonexistent/libssh.so.4: cannot open shared object file: No such file or directory (install libssh-4, or name the library in VIGIL_LIBSSH)" ||
	fail "ssh error was: $err"
doc=$(VIGIL_LIBSSH=/nonexistent/libssh.so.4 "$VIGIL" doctor --backend ssh)
echo "$doc" | grep -qxF "ssh: missing (cannot load libssh.so.4: /nonexistent/libssh.so.4: cannot open shared object file: No such file or directory (install libssh-4, or name the library in VIGIL_LIBSSH))" ||
	fail "doctor: $doc"
"$VIGIL" doctor --backend ssh | grep -q '^ssh: ok (libssh ' ||
	fail "doctor with libssh: $("$VIGIL" doctor --backend ssh)"
echo "ok"

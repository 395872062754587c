#!/bin/sh
# t0209-cli-libcurl: vigil is not linked against libcurl; it loads it on
# the first HTTP call.  A local run never loads it (it works with
# VIGIL_LIBCURL naming nothing); a docker task with no libcurl to load
# ends BACKEND_ERROR saying which library and how to fix it, and starts
# nothing.
set -u
fail() { echo "FAIL: $*"; exit 1; }
VIGIL_HOME=$(mktemp -d); export VIGIL_HOME
trap 'rm -rf "$VIGIL_HOME"' EXIT

ldd "$VIGIL" | grep -q libcurl && fail "vigil is linked against libcurl"

cat >"$VIGIL_HOME/local.yaml" <<'YAML'
version: 1
name: nocurl
command: 'echo fine'
YAML
VIGIL_LIBCURL=/nonexistent/libcurl.so.4 "$VIGIL" run -q \
    "$VIGIL_HOME/local.yaml" || fail "a local run needed libcurl"

cat >"$VIGIL_HOME/docker.yaml" <<'YAML'
version: 1
name: nocurl
backend: docker
image: alpine:3
command: 'true'
YAML
err=$(VIGIL_LIBCURL=/nonexistent/libcurl.so.4 DOCKER_HOST=unix:///nonexistent \
    "$VIGIL" run "$VIGIL_HOME/docker.yaml" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "docker run without libcurl exited $rc: $err"
echo "$err" | grep -qF "/0 [-] BACKEND_ERROR: docker: cannot load libcurl: /nonexistent/libcurl.so.4: cannot open shared object file: No such file or directory (install libcurl4, or name the library in VIGIL_LIBCURL)" ||
	fail "error was: $err"

# With the library it is found by its soname and works (a refused
# connection, not a load error).
err=$(DOCKER_HOST=unix:///nonexistent "$VIGIL" run "$VIGIL_HOME/docker.yaml" 2>&1)
echo "$err" | grep -q "cannot load libcurl" && fail "libcurl.so.4 not loaded: $err"
echo "$err" | grep -q "BACKEND_ERROR" || fail "no engine, yet: $err"
echo "ok"

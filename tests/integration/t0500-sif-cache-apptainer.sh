#!/bin/sh
# t0500-sif-cache-apptainer.sh - the SIF cache with real `apptainer pull
# docker://` from a local OCI registry: eight concurrent pulls of one
# image run apptainer once, the cached image runs under `apptainer exec`,
# a truncated copy is detected and pulled again.
#
# Needs the Apptainer harness: tests/harness/apptainer-up DIR and
# tests/harness/registry-up DIR print shell assignments (APPTAINER=...,
# REGISTRY=127.0.0.1:PORT, IMAGE=docker://127.0.0.1:PORT/NAME:TAG) and
# tests/harness/registry-down DIR stops the registry.  Without them the
# test is skipped.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
for h in apptainer-up registry-up registry-down; do
	if [ ! -x "$here/harness/$h" ]; then
		echo "skip: Apptainer harness tests/harness/$h not present"
		exit 77
	fi
done
tmp=$(mktemp -d)
cleanup() {
	"$here/harness/registry-down" "$tmp/reg" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
export VIGIL_HOME="$tmp/home" VIGIL_SIF_CACHE="$tmp/cache"
export APPTAINER_NOHTTPS=1 APPTAINER_CACHEDIR="$tmp/apptainer-cache"
fail() { echo "FAIL: $*"; exit 1; }

eval "$("$here/harness/apptainer-up" "$tmp/app")"
eval "$("$here/harness/registry-up" "$tmp/reg")"
[ -n "${APPTAINER:-}" ] && [ -n "${IMAGE:-}" ] || fail "harness output"

# count the real puller's runs with a wrapper that execs it
cat >"$tmp/puller" <<EOS
#!/bin/sh
echo "\$*" >>"$tmp/pulls.log"
exec "$APPTAINER" "\$@"
EOS
chmod +x "$tmp/puller"

pids=""
for i in 1 2 3 4 5 6 7 8; do
	"$VIGIL" cache pull --puller "$tmp/puller" "$IMAGE" >"$tmp/p$i" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || { cat "$tmp"/p*; fail "a pull failed"; }; done
n=$(grep -c "^pull " "$tmp/pulls.log")
[ "$n" -eq 1 ] || fail "8 concurrent pulls ran apptainer $n times"
[ "$(sort -u "$tmp"/p? | wc -l)" -eq 1 ] || fail "pulls disagree"
path=$(cut -d' ' -f3 "$tmp/p1")
[ -f "$path" ] || fail "no image at '$path'"
"$APPTAINER" exec --containall "$path" true || fail "image does not run"

# truncated: verify notices, the next pull runs apptainer again
truncate -s 4096 "$path"
set +e
"$VIGIL" cache verify >"$tmp/v"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "^corrupt " "$tmp/v" || fail "verify: $(cat "$tmp/v")"
"$VIGIL" cache pull --puller "$tmp/puller" "$IMAGE" >"$tmp/again"
[ "$(grep -c "^pull " "$tmp/pulls.log")" -eq 2 ] || fail "no re-pull"
# a new pull may differ in its build time, hence in its digest
path=$(cut -d' ' -f3 "$tmp/again")
"$APPTAINER" exec --containall "$path" true || fail "re-pulled image"
echo "ok"

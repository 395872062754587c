#!/bin/sh
# t0504-apptainer-reuse.sh - reuse keys of the singularity backend name
# the image by its content, with the real apptainer: a local SIF by its
# size and XXH64 (the same file again is a hit, the same path rebuilt is
# a miss), a docker:// reference by the digest the SIF cache pulled it as
# (a new push of the tag, once pulled again, is a miss; before that the
# cached image is what runs, and the key says so).
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
unset APPTAINER_WRAP_BINDS

# image_line RUN/TASK - the "image:" line of the task's reuse key
image_line() {
	"$VIGIL" status "$1" --json | "$PY" -c '
import json, sys
r = json.load(sys.stdin)["tasks"][0]["reuse"]
print([l for l in r["description"] if l.startswith("image: ")][0])'
}
# states - the states of run $rid's tasks, space-separated
states() {
	"$VIGIL" status "$rid" --json | "$PY" -c '
import json, sys
print(" ".join(t["state"] for t in json.load(sys.stdin)["tasks"]))'
}

# ---- a local SIF ----
cp "$BUSYBOX_SIF" "$tmp/img.sif"
m=$(mf local "'echo v=\${{ matrix.v }}'" "reuse: true" "matrix:" "  v: [1, 2]")
sed -i "s|^image: .*|image: $tmp/img.sif|" "$m"
vrun "$m"
expect "$vrc" "0" "first run: $(cat "$tmp/run.err")"
expect "$(states)" "SUCCEEDED SUCCEEDED" "first run's states"
r1=$rid
l1=$(image_line "$r1/0")
size=$(stat -c %s "$tmp/img.sif")
case $l1 in
"image: $tmp/img.sif size $size xxh64:"????????????????) ;;
*) fail "local image's key line: '$l1'" ;;
esac
vrun "$m"
expect "$vrc" "0" "second run"
expect "$(states)" "CACHED CACHED" "the same image again"
expect "$(image_line "$rid/0")" "$l1" "the same image's key line"

# The same path, rebuilt (one more data object: a valid SIF that
# differs): every task runs again.
echo "rebuilt" >"$tmp/note"
siftool add "$tmp/img.sif" "$tmp/note" --datatype 7 >/dev/null ||
	fail "siftool add"
vrun "$m"
expect "$vrc" "0" "run after the rebuild: $(cat "$tmp/run.err")"
expect "$(states)" "SUCCEEDED SUCCEEDED" "a rebuilt image is a miss"
l2=$(image_line "$rid/0")
[ "$l2" != "$l1" ] || fail "the rebuilt image's key line did not change"
expect "$("$VIGIL" logs "$rid/1")" "v=2" "the task ran in the rebuilt image"

# ---- a docker:// reference through the SIF cache ----
trap '"$top/tests/harness/registry-down" "$tmp/reg" >/dev/null 2>&1;
    rm -rf "$tmp"' EXIT INT TERM
reg=$("$top/tests/harness/registry-up" "$tmp/reg") ||
	fail "tests/harness/registry-up failed"
eval "$reg"
APPTAINER_CACHEDIR=$tmp/apptainer-cache
APPTAINER_NOHTTPS=1
VIGIL_SIF_CACHE=$tmp/cache
export APPTAINER_CACHEDIR APPTAINER_NOHTTPS VIGIL_SIF_CACHE
sed -i "s|^image: .*|image: $REGISTRY_IMAGE|" "$m"
vrun "$m"
expect "$vrc" "0" "first run of the reference: $(cat "$tmp/run.err")"
expect "$(states)" "SUCCEEDED SUCCEEDED" "first run of the reference"
digest() {
	"$VIGIL" cache list --json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
imgs = d["images"] if isinstance(d, dict) else d
print(" ".join(sorted(i["digest"] for i in imgs)))'
}
d1=$(digest)
expect "$(image_line "$rid/0")" "image: $REGISTRY_IMAGE sha256:$d1" \
    "the reference's key line names the pulled digest"
vrun "$m"
expect "$(states)" "CACHED CACHED" "the same reference again"

# A new push of the same tag: the cached image still runs (and the key
# says which), until the cache pulls the tag again.
rfs=$tmp/rootfs2
mkdir -p "$rfs/bin"
cp /bin/busybox "$rfs/bin/busybox"
ln -s busybox "$rfs/bin/sh"
ln -s busybox "$rfs/bin/echo"
echo v2 >"$rfs/version"
tar -C "$rfs" -c . | $PODMAN import - localhost/bb:v2 >/dev/null 2>&1 ||
	fail "podman import"
$PODMAN push --tls-verify=false localhost/bb:v2 \
    "docker://127.0.0.1:$REGISTRY_PORT/bb:1" >/dev/null 2>&1 ||
	fail "podman push"
vrun "$m"
expect "$(states)" "CACHED CACHED" "a new push not pulled yet"
"$VIGIL" cache pull --force --puller "$APPTAINER_WRAP" "$REGISTRY_IMAGE" \
    >"$tmp/pull.out" 2>&1 || fail "cache pull: $(cat "$tmp/pull.out")"
vrun "$m"
expect "$vrc" "0" "run after the new pull: $(cat "$tmp/run.err")"
expect "$(states)" "SUCCEEDED SUCCEEDED" "the new push, pulled, is a miss"
l3=$(image_line "$rid/0")
case $l3 in
"image: $REGISTRY_IMAGE sha256:$d1") fail "the key kept the old digest" ;;
"image: $REGISTRY_IMAGE sha256:"????????????????????????????????????????????????????????????????) ;;
*) fail "the reference's key line after the new pull: '$l3'" ;;
esac
echo "t0504: ok"

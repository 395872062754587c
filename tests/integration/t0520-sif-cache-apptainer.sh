#!/bin/sh
# t0520-sif-cache-apptainer.sh - `vigil run` of a docker:// image through
# the SIF cache with real `apptainer pull` from a local OCI registry:
# eight concurrent runs needing the image cause exactly one pull (counted
# by a wrapper that logs and then runs the real apptainer), every task
# runs in the pulled SIF; a truncated and a corrupted cached image are
# detected on the next run and pulled again, never run; the warning for
# a cache on scratch without a purge policy.
set -u

. "$(dirname "$0")/../harness/apptainer-lib.sh"
trap '"$top/tests/harness/registry-down" "$tmp/reg" >/dev/null 2>&1;
    rm -rf "$tmp"' EXIT INT TERM
reg=$("$top/tests/harness/registry-up" "$tmp/reg") ||
	fail "tests/harness/registry-up failed"
eval "$reg"
[ -n "${REGISTRY_IMAGE:-}" ] || fail "registry-up printed no REGISTRY_IMAGE"

# apptainer's own layer cache, private; the registry is plain http
APPTAINER_CACHEDIR=$tmp/apptainer-cache
APPTAINER_NOHTTPS=1
export APPTAINER_CACHEDIR APPTAINER_NOHTTPS
unset VIGIL_SIF_CACHE

# The real apptainer behind a wrapper that logs each subcommand and its
# image argument first.
cat >"$tmp/apptainer" <<EOS
#!/bin/sh
echo "\$*" >>"$tmp/calls.log"
exec "$APPTAINER_WRAP" "\$@"
EOS
chmod +x "$tmp/apptainer"
: >"$tmp/calls.log"
pulls() { grep -c '^pull ' "$tmp/calls.log"; }

# manifest NAME [more lines of the cache section...]
manifest() {
	_f=$tmp/$1.yaml
	shift
	{
		echo "version: 1"
		echo "name: sif"
		echo "backend: singularity"
		echo "image: $REGISTRY_IMAGE"
		echo "command: echo /bin/*; echo \"task \$VIGIL_TASK_INDEX\""
		echo "singularity:"
		echo "  binary: $tmp/apptainer"
		echo "cache:"
		echo "  dir: $tmp/cache"
		for _l in "$@"; do echo "$_l"; done
	} >"$_f"
	echo "$_f"
}
m=$(manifest m)

# eight concurrent runs, one image, one pull
pids=""
for i in 1 2 3 4 5 6 7 8; do
	"$VIGIL" run -q "$m" >"$tmp/run$i.out" 2>"$tmp/run$i.err" &
	pids="$pids $!"
done
i=0
for p in $pids; do
	i=$((i + 1))
	wait "$p" || fail "run $i exited $?: $(cat "$tmp/run$i.err")"
done
expect "$(pulls)" "1" "apptainer pulls for 8 concurrent runs"
sif=$(ls "$tmp/cache/sha256/"*.sif)
[ "$(echo "$sif" | wc -l)" -eq 1 ] || fail "cached images: $sif"
digest=$(basename "$sif" .sif)
expect "$(sha256sum "$sif" | cut -c1-64)" "$digest" "content address"
# every task ran apptainer exec on the cached file, and saw its rootfs
expect "$(grep -c "^exec .* $sif /bin/sh -c echo /bin/" "$tmp/calls.log")" "8" \
    "execs of the cached image"
"$VIGIL" status --json >"$tmp/st.json"
python3 - "$tmp/st.json" <<'P' || fail "status of the 8 runs: $(cat "$tmp/st.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 8, runs
assert all(r["state"] == "SUCCEEDED" for r in runs), runs
P
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
# the registry image's /bin (registry-up), not the host's nor BUSYBOX_SIF's
expect "$("$VIGIL" logs "$id/0")" \
    "/bin/busybox /bin/cat /bin/echo /bin/env /bin/false /bin/id /bin/ls /bin/sh /bin/sleep /bin/true
task 0" \
    "output of a task in the pulled image"
# no pins left once the runs ended, no temp files
expect "$(ls "$tmp/cache/pins" | wc -l)" "0" "pins after the runs"
expect "$(ls "$tmp/cache/tmp" | wc -l)" "0" "temp files after the pulls"

# truncated behind vigil's back: the next run notices, pulls again and
# runs the fresh copy, never the damaged one
truncate -s 8192 "$sif"
"$VIGIL" run -q "$m" >"$tmp/r.out" 2>"$tmp/r.err" ||
	fail "run after truncation: $(cat "$tmp/r.err")"
expect "$(pulls)" "2" "pulls after truncation"
new=$(ls "$tmp/cache/sha256/"*.sif)
[ "$(stat -c %s "$new")" -gt 8192 ] || fail "re-pulled image is still truncated"
expect "$(grep -c '^exec ' "$tmp/calls.log")" "9" "execs after truncation"
tail -n 1 "$tmp/calls.log" | grep -q " $new /bin/sh -c echo /bin/" ||
	fail "the run did not use the fresh image: $(tail -n 1 "$tmp/calls.log")"

# corrupted in place: the system partition (found through the header's
# descriptor table) no longer starts with the squashfs magic
poff=$(python3 - "$new" <<'P'
import struct, sys
f = open(sys.argv[1], "rb").read()
doff = struct.unpack_from("<q", f, 32 + 10 + 3 + 3 + 16 + 8 * 4)[0]
total = struct.unpack_from("<q", f, 32 + 10 + 3 + 3 + 16 + 8 * 3)[0]
for i in range(total):
    d = doff + i * 585
    dtype, used = struct.unpack_from("<ib", f, d)
    if used and dtype == 0x4004:
        print(struct.unpack_from("<q", f, d + 1 + 4 * 3 + 4)[0])
        break
P
)
[ -n "$poff" ] || fail "no partition found in $new"
printf 'XXXX' | dd of="$new" bs=1 seek="$poff" conv=notrunc 2>/dev/null
"$VIGIL" run -q "$m" >"$tmp/r.out" 2>"$tmp/r.err" ||
	fail "run after corruption: $(cat "$tmp/r.err")"
expect "$(pulls)" "3" "pulls after corruption"
expect "$(grep -c '^exec ' "$tmp/calls.log")" "10" "execs after corruption"

# a failed pull is apptainer's failure, told apart from the task's exit
m2=$(manifest m2)
sed -i "s|^image: .*|image: docker://127.0.0.1:$REGISTRY_PORT/nosuch:1|" "$m2"
"$VIGIL" run -q "$m2" >"$tmp/r.out" 2>"$tmp/r.err"
rc=$?
expect "$rc" "1" "exit status of a run whose image cannot be pulled ($(cat "$tmp/r.err"))"
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
"$VIGIL" status "$id" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["tasks"][0]
assert t["state"] == "BACKEND_ERROR", t
assert t["reason"].startswith("'"'$tmp/apptainer pull'"' of '"'docker://127.0.0.1:$REGISTRY_PORT/nosuch:1'"' failed (exit 255): "), t["reason"]
' || fail "missing image: $("$VIGIL" status "$id" --json)"
expect "$(grep -c '^exec ' "$tmp/calls.log")" "10" "no exec for a failed pull"

# a cache on scratch with no purge policy: one warning per run; a policy
# (even none) silences it
mkdir -p "$tmp/scr"
m3=$(manifest m3)
sed -i "s|  dir: $tmp/cache|  dir: $tmp/scr/cache|" "$m3"
SCRATCH=$tmp/scr "$VIGIL" run -q "$m3" >"$tmp/r.out" 2>"$tmp/r.err" ||
	fail "run on scratch: $(cat "$tmp/r.err")"
expect "$(grep -c 'warning' "$tmp/r.err")" "1" "warnings"
expect "$(grep 'warning' "$tmp/r.err")" "vigil: warning: SIF cache '$tmp/scr/cache' is on a scratch file system (\$SCRATCH) but no purge policy is set: images may be purged under running tasks; set cache.purge (a site preset such as nersc, or {age, clock}, or none)" "warning text"
m4=$(manifest m4 "  purge:" "    preset: none")
sed -i "s|  dir: $tmp/cache|  dir: $tmp/scr/cache|" "$m4"
SCRATCH=$tmp/scr "$VIGIL" run -q "$m4" >"$tmp/r.out" 2>"$tmp/r.err" ||
	fail "run with purge none: $(cat "$tmp/r.err")"
expect "$(grep -c 'warning' "$tmp/r.err")" "0" "warnings with a policy"
echo "t0520-sif-cache: ok"

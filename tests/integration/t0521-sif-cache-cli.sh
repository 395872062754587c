#!/bin/sh
# t0521-sif-cache-cli.sh - `vigil cache` end to end over real SIF images
# (siftool around a mksquashfs image) served by a loopback HTTP server:
# one pull for eight concurrent pulls, corruption and a simulated purge
# found by verify, expiring images refreshed, gc, rm, errors.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/../scripts/deps.sh" siftool squashfs-tools python3 >/dev/null
tmp=$(mktemp -d)
srv_pid=""
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
export VIGIL_HOME="$tmp/home" VIGIL_SIF_CACHE="$tmp/cache"
export VIGIL_SITE_CONFIG="$tmp/site.yaml" VIGIL_USER_CONFIG="$tmp/user.yaml"
unset VIGIL_SCRATCH SCRATCH PSCRATCH SLURM_TMPDIR
fail() { echo "FAIL: $*"; exit 1; }

# two real images
mkdir -p "$tmp/srv"
for n in a b; do
	"$here/harness/mksif" "$tmp/srv/$n.sif" "$n"
done
da=$(sha256sum "$tmp/srv/a.sif" | cut -c1-64)

python3 "$here/harness/sif-http.py" "$tmp/srv" "$tmp/port" "$tmp/http.log" &
srv_pid=$!
i=0
while [ ! -s "$tmp/port" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "http server did not start"
	sleep 0.1
done
port=$(cat "$tmp/port")
A=http://127.0.0.1:$port/a.sif
B=http://127.0.0.1:$port/slow/b.sif

# one pull, then a cached answer
out=$("$VIGIL" cache pull "$A")
[ "$out" = "sha256:$da  $tmp/cache/sha256/$da.sif" ] || fail "pull: $out"
"$VIGIL" cache pull "$A" >/dev/null
[ "$(grep -c "GET /a.sif" "$tmp/http.log")" -eq 1 ] || fail "a pulled twice"
"$VIGIL" cache pull "$A@sha256:$da" >/dev/null

# eight concurrent pulls of a slow image: exactly one GET
pids=""
for i in 1 2 3 4 5 6 7 8; do
	"$VIGIL" cache pull "$B" >"$tmp/p$i.out" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a concurrent pull failed"; done
n=$(grep -c "GET /slow/b.sif" "$tmp/http.log")
[ "$n" -eq 1 ] || fail "8 concurrent pulls made $n requests"
[ "$(sort -u "$tmp"/p*.out | wc -l)" -eq 1 ] || fail "pulls disagree"

# list, as a table and as JSON
"$VIGIL" cache list >"$tmp/list"
grep -q "^$(echo "$da" | cut -c1-12)     36K  " "$tmp/list" ||
    { cat "$tmp/list"; fail "list"; }
"$VIGIL" cache list --json | python3 -c '
import json, sys
v = json.load(sys.stdin)
assert len(v) == 2, v
a = [x for x in v if x["refs"] == [sys.argv[1]]][0]
assert a["present"] and a["size"] == 36864 and a["pins"] == 0, a
assert a["purge_at"] is None, a
' "$A" || fail "list --json"

# a clean cache verifies
"$VIGIL" cache verify >"$tmp/v" || fail "verify of a clean cache"
[ "$(cat "$tmp/v")" = "verify: 0 problems" ] || fail "verify: $(cat "$tmp/v")"

# truncated behind our back: verify reports and removes, pull re-fetches
truncate -s 20000 "$tmp/cache/sha256/$da.sif"
set +e
"$VIGIL" cache verify >"$tmp/v"; rc=$?
set -e
[ $rc -eq 1 ] || fail "verify of a damaged cache exited $rc"
grep -q "^corrupt     $(echo "$da" | cut -c1-12)  '.*': descriptor table (offset 4096, 28080 bytes) ends beyond the end of the file (20000 bytes; truncated?); removed$" "$tmp/v" ||
    { cat "$tmp/v"; fail "verify corrupt line"; }
"$VIGIL" cache pull "$A" >/dev/null
[ "$(grep -c "GET /a.sif" "$tmp/http.log")" -eq 2 ] || fail "no re-pull"

# a simulated purge: the file deleted
rm "$tmp/cache/sha256/$da.sif"
set +e
"$VIGIL" cache verify >"$tmp/v"; rc=$?
set -e
[ $rc -eq 1 ] || fail "verify after purge exited $rc"
grep -q "^missing     $(echo "$da" | cut -c1-12)  image is gone (purged or removed outside vigil); records removed$" "$tmp/v" ||
    { cat "$tmp/v"; fail "verify missing line"; }
"$VIGIL" cache list | grep -q "$A" && fail "ref of a purged image listed"

# aged with touch -d: expiring under the NERSC rule, refreshed
"$VIGIL" cache pull "$A" >/dev/null
touch -d "55 days ago" "$tmp/cache/sha256/$da.sif"
set +e
"$VIGIL" cache verify --purge nersc >"$tmp/v"; rc=$?
set -e
[ $rc -eq 1 ] || fail "verify of an expiring image exited $rc"
grep -q "^expiring    $(echo "$da" | cut -c1-12)  eligible for purge at " "$tmp/v" ||
    { cat "$tmp/v"; fail "verify expiring line"; }
n=$(grep -c "GET /a.sif" "$tmp/http.log")
"$VIGIL" cache verify --purge nersc --refresh >"$tmp/v" || true
grep -q "; pulled again from '$A'" "$tmp/v" || { cat "$tmp/v"; fail "refresh"; }
[ "$(grep -c "GET /a.sif" "$tmp/http.log")" -eq $((n + 1)) ] ||
    fail "refresh did not pull"
"$VIGIL" cache verify --purge nersc >/dev/null || fail "still expiring"
# `cache pull` also refreshes an expiring image
touch -d "55 days ago" "$tmp/cache/sha256/$da.sif"
"$VIGIL" cache pull --purge nersc "$A" >/dev/null
[ "$(grep -c "GET /a.sif" "$tmp/http.log")" -eq $((n + 2)) ] ||
    fail "pull did not refresh"

# gc: dry run removes nothing, then the quota applies
out=$("$VIGIL" cache gc --dry-run --max-entries 1)
echo "$out" | grep -q "^gc: would remove 1 of 2 images" || fail "gc -n: $out"
[ "$(ls "$tmp/cache/sha256" | wc -l)" -eq 2 ] || fail "dry run removed"
out=$("$VIGIL" cache gc --max-entries 1)
echo "$out" | grep -q "^removed  .*  quota$" || fail "gc: $out"
[ "$(ls "$tmp/cache/sha256" | wc -l)" -eq 1 ] || fail "gc removed nothing"

# rm, and errors
"$VIGIL" cache pull "$A" >/dev/null
"$VIGIL" cache rm "$(echo "$da" | cut -c1-10)"
[ ! -e "$tmp/cache/sha256/$da.sif" ] || fail "rm"
set +e
err=$("$VIGIL" cache rm "$A" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$err" = "vigil: cache rm: no cached image matches '$A' (give a reference as pulled, or 8+ hex digits of a digest)" ] ||
    fail "rm of a missing image: $rc $err"
err=$("$VIGIL" cache pull "http://127.0.0.1:$port/none.sif" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$err" = "vigil: cache pull: cannot fetch 'http://127.0.0.1:$port/none.sif': The requested URL returned error: 404" ] ||
    fail "404: $rc $err"
err=$("$VIGIL" cache pull "$A@sha256:$(printf '%064d' 0)" 2>&1); rc=$?
echo "$err" | grep -q ", not the pinned 0000" || fail "digest: $err"
err=$("$VIGIL" cache gc --purge nersk 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$err" = "vigil: cache: unknown purge preset 'nersk' (valid: nersc, olcf, jsc, cscs, alliance, pawsey, purdue, none)" ] ||
    fail "bad preset: $rc $err"
err=$("$VIGIL" cache frob 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown subcommand: $rc $err"
echo "$err" | grep -q "unknown cache command 'frob' (valid: list, pull, verify, gc, rm)" ||
    fail "unknown subcommand: $err"
set -e
[ "$(ls "$tmp/cache/tmp" | wc -l)" -eq 0 ] || fail "temp files left"

# settings from the configuration, as a run sees them: the default
# directory under the scratch base, cache.dir from the user config over
# the site's, the purge rule from the config (options still win)
unset VIGIL_SIF_CACHE
mkdir -p "$tmp/scr"
printf 'scratch:\n  path: %s\n' "$tmp/scr" >"$tmp/site.yaml"
out=$("$VIGIL" cache pull "$A") || fail "pull to the default dir"
expect_out="sha256:$da  $tmp/scr/vigil-sif-cache/sha256/$da.sif"
[ "$out" = "$expect_out" ] || fail "default dir: $out"
printf 'cache:\n  dir: %s\n  purge:\n    preset: nersc\n' "$tmp/cfgcache" \
    >"$tmp/user.yaml"
"$VIGIL" cache pull "$A" >/dev/null || fail "pull to cache.dir"
[ -f "$tmp/cfgcache/sha256/$da.sif" ] || fail "cache.dir not used"
touch -d "55 days ago" "$tmp/cfgcache/sha256/$da.sif"
set +e
"$VIGIL" cache verify >"$tmp/v"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "^expiring " "$tmp/v" ||
    fail "purge rule from the config: $rc $(cat "$tmp/v")"
"$VIGIL" cache verify --purge none >/dev/null ||
    fail "--purge none over the config's rule"
# on scratch without a rule: the warning; a bad config file: its line
printf 'cache:\n  dir: %s\n' "$tmp/scr/c2" >"$tmp/user.yaml"
err=$(SCRATCH=$tmp/scr "$VIGIL" cache list 2>&1 >/dev/null)
[ "$err" = "vigil: warning: SIF cache '$tmp/scr/c2' is on a scratch file system (\$SCRATCH) but no purge policy is set: images may be purged under running tasks; set cache.purge (a site preset such as nersc, or {age, clock}, or none)" ] ||
    fail "warning: $err"
printf 'cache:\n  quota_bytes: lots\n' >"$tmp/user.yaml"
set +e
err=$("$VIGIL" cache list 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$err" | grep -q "^vigil: $tmp/user.yaml:2:16: " ||
    fail "bad config: $rc $err"
echo "ok"

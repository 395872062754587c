#!/bin/sh
# vigil scratch list and gc: finished runs are removed and reported, runs
# whose owner is alive (here, or on another host) are kept.
set -u
fail() { echo "FAIL: $*"; exit 1; }
expect() { [ "$1" = "$2" ] || fail "$3: expected
'$2', got
'$1'"; }
tmp=$(mktemp -d /tmp/vigil-t0510.XXXXXX)
sleep 300 &
live=$!
trap 'kill $live 2>/dev/null; rm -rf "$tmp"' EXIT
VIGIL_HOME=$tmp/home
VIGIL_SITE_CONFIG=$tmp/site.yaml VIGIL_USER_CONFIG=$tmp/user.yaml
export VIGIL_HOME VIGIL_SITE_CONFIG VIGIL_USER_CONFIG
unset VIGIL_SCRATCH SCRATCH SLURM_TMPDIR
base=$tmp/scratch
mkdir -p "$base"
host=$(hostname)
start=$(sed 's/.*) //' /proc/$live/stat | cut -d' ' -f20)

# three runs: finished (dead owner), running here, running elsewhere
mkdir -p "$base/vigil/r-done/0" "$base/vigil/r-done/1" \
    "$base/vigil/r-live/0" "$base/vigil/r-remote/0"
head -c 100000 /dev/zero >"$base/vigil/r-done/0/data"
ln -s /etc/hostname "$base/vigil/r-done/1/link"
sh -c 'exit 0' & dead=$!; wait $dead
echo "$host $dead 1" >"$base/vigil/r-done/.task-0.owner"
echo "$host $live $start" >"$base/vigil/r-live/.task-0.owner"
echo "node-elsewhere-7 4242 99" >"$base/vigil/r-remote/.task-0.owner"

out=$(VIGIL_SCRATCH=$base "$VIGIL" scratch list) || fail "list exited $?"
echo "$out"
expect "$(echo "$out" | sed -n 1p)" "base: $base (\$VIGIL_SCRATCH)" "list base"
echo "$out" | grep -q "^r-done  *finished  *2 " || fail "r-done not finished"
echo "$out" | grep -q "^r-live  *running  *1 .*($host pid $live)$" ||
	fail "r-live not running"
echo "$out" | grep -q "^r-remote  *running .*(node-elsewhere-7 pid 4242)$" ||
	fail "r-remote not running"

out=$("$VIGIL" scratch gc --dry-run --base "$base") || fail "dry run $?"
echo "$out" | grep -q "^would remove $base/vigil/r-done (2 tasks, " ||
	fail "dry run: $out"
[ -d "$base/vigil/r-done" ] || fail "dry run removed r-done"

out=$("$VIGIL" scratch gc --base "$base") || fail "gc exited $?"
echo "$out"
expect "$(echo "$out" | grep -c '^kept ')" "2" "kept runs"
echo "$out" | grep -q "^kept r-live: running ($host pid $live)$" || fail "kept r-live"
echo "$out" | grep -q "^removed $base/vigil/r-done (2 tasks, 1[0-9][0-9].[0-9] KiB)$" ||
	fail "removed line"
echo "$out" | grep -q "^freed 1[0-9][0-9].[0-9] KiB in 1 run; 2 running runs kept$" ||
	fail "summary line"
[ ! -e "$base/vigil/r-done" ] || fail "r-done still there"
[ -d "$base/vigil/r-live/0" ] || fail "r-live removed"
[ -d "$base/vigil/r-remote/0" ] || fail "r-remote removed"
[ -f /etc/hostname ] || fail "gc followed a symlink"

# once the owner is gone, the run is finished
kill $live; wait $live 2>/dev/null
out=$("$VIGIL" scratch gc --base "$base")
echo "$out" | grep -q "^removed $base/vigil/r-live (1 task, " || fail "r-live after exit: $out"

# the base from the configuration: the user config over the site's, the
# option over both; a bad config file is named with its line
mkdir -p "$tmp/site-scr/vigil/r-site/0" "$tmp/user-scr/vigil/r-user/0"
printf 'scratch:\n  path: %s\n' "$tmp/site-scr" >"$tmp/site.yaml"
out=$("$VIGIL" scratch list) || fail "list with a site config: $?"
expect "$(echo "$out" | sed -n 1p)" "base: $tmp/site-scr (scratch.path)" "site config base"
echo "$out" | grep -q "^r-site  *finished " || fail "site config list: $out"
printf 'scratch:\n  path: %s\n' "$tmp/user-scr" >"$tmp/user.yaml"
out=$("$VIGIL" scratch gc) || fail "gc with a user config: $?"
echo "$out" | grep -q "^removed $tmp/user-scr/vigil/r-user (1 task, " ||
	fail "user config gc: $out"
[ -d "$tmp/site-scr/vigil/r-site" ] || fail "gc used the site base"
out=$("$VIGIL" scratch list --base "$base")
expect "$(echo "$out" | sed -n 1p)" "base: $base (scratch.path)" "option over config"
printf 'scratch:\n  keep: sometimes\n' >"$tmp/user.yaml"
out=$("$VIGIL" scratch list 2>&1); rc=$?
expect "$rc" "2" "bad config exit"
echo "$out" | grep -q "^vigil: $tmp/user.yaml:2:9: " || fail "bad config: $out"
rm -f "$tmp/user.yaml" "$tmp/site.yaml"

# errors: a bad base, a bad action, --dry-run with list
touch "$tmp/file"
out=$("$VIGIL" scratch list --base "$tmp/file" 2>&1); rc=$?
expect "$rc" "2" "bad base exit"
expect "$out" "vigil: scratch: scratch.path '$tmp/file' is not a directory" "bad base"
out=$("$VIGIL" scratch purge 2>&1); rc=$?
expect "$rc" "2" "bad action exit"
expect "$(echo "$out" | head -n 1)" "vigil: scratch: unknown action 'purge' (list or gc)" "bad action"
out=$("$VIGIL" scratch list -n 2>&1); rc=$?
expect "$(echo "$out" | head -n 1)" "vigil: scratch: --dry-run goes with gc" "list -n"
echo "t0510: ok"

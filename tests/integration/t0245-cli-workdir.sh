#!/bin/sh
# A newcomer's first manifest: its command writes metrics.csv into the
# directory vigil was started in, at the default isolation, and it lands
# there.  A write the sandbox refuses says so (which path, which level,
# the manifest line that would allow it) in the end line, `vigil status`
# and the --cron summary.  A site config that turns the grant off is
# obeyed and explained; a manifest may ask for it back.  A session's
# --workdir is where its commands run and write.
set -u
. "$(dirname "$0")/engine-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
proj=$W/proj
mkdir -p "$proj"
cd "$proj" || exit 1
cat >sweep.yaml <<'Y'
version: 1
name: first
matrix:
  seed: [1, 2]
command: python3 -c "open('metrics-${{ matrix.seed }}.csv', 'w').write('loss,0.1\n')"
Y
"$VIGIL" run sweep.yaml >"$W/o" 2>&1 || fail "the first sweep failed: $(cat "$W/o")"
expect_eq "metrics" "loss,0.1" "$(cat metrics-1.csv)"
[ -f metrics-2.csv ] || fail "metrics-2.csv missing"

# The example does the same.
ex=$W/ex
mkdir "$ex"
(cd "$ex" && "$VIGIL" run -q "$top/examples/jobs/results-here.yaml") \
    >"$W/o" 2>&1 || fail "examples/jobs/results-here.yaml: $(cat "$W/o")"
expect_eq "example results" 3 "$(cat "$ex"/metrics-*.csv | grep -c '^[123],0\.')"

# A refused write names itself, everywhere the reason is shown.
echo 'echo x >/srv/vigil-out.txt' >w.sh
cat >refused.yaml <<'Y'
version: 1
name: refused
isolation:
  level: standard
command: sh w.sh
Y
"$VIGIL" run refused.yaml >"$W/o" 2>&1 && fail "the refused write succeeded"
want="the sandbox refused writing '/srv/vigil-out.txt' (isolation standard"
grep -qF "$want" "$W/o" || fail "end line: $(cat "$W/o")"
grep -qF "add it to isolation.writable at refused.yaml:3" "$W/o" ||
    fail "no manifest line: $(cat "$W/o")"
id=$(sed -n 's/^vigil: run \([^ :]*\): .*/\1/p' "$W/o" | head -1)
"$VIGIL" status "$id" | grep -qF "$want" || fail "status: $("$VIGIL" status "$id")"
"$VIGIL" run --cron refused.yaml >"$W/c" 2>&1 && fail "--cron succeeded"
grep -qF "$want" "$W/c" || fail "--cron summary: $(cat "$W/c")"
[ ! -e /srv/vigil-out.txt ] || fail "the write happened"

# The site turns the grant off: refused and explained; asked back: works.
cat >"$W/site.yaml" <<'Y'
version: 1
isolation:
  workdir: read
Y
echo 'echo x >note.txt' >n.sh
printf 'version: 1\nname: note\ncommand: sh n.sh\n' >note.yaml
VIGIL_SITE_CONFIG=$W/site.yaml "$VIGIL" run note.yaml >"$W/o" 2>&1 &&
    fail "the site's isolation.workdir: read was not obeyed"
grep -qF "the sandbox refused writing '$proj/note.txt' (isolation standard writes only the task, scratch and temp directories and isolation.writable)" "$W/o" ||
    fail "site off: $(cat "$W/o")"
VIGIL_SITE_CONFIG=$W/site.yaml "$VIGIL" run --set isolation.workdir=write \
    note.yaml >"$W/o" 2>&1 || fail "asked back: $(cat "$W/o")"
[ -f note.txt ] || fail "note.txt missing"

# .git stays as it was; the task is told why.
mkdir -p .git/hooks
echo '[core]' >.git/config
echo 'echo "[alias] x = !touch /tmp/pwned" >>.git/config' >g.sh
printf 'version: 1\nname: git\ncommand: sh g.sh\n' >git.yaml
"$VIGIL" run git.yaml >"$W/o" 2>&1 && fail "the .git/config write succeeded"
expect_eq ".git/config" "[core]" "$(cat .git/config)"
grep -qF "the sandbox keeps '$proj/.git/config' read-only (isolation standard)" "$W/o" ||
    fail "git: $(cat "$W/o")"

# validate says when the working directory will not be writable, and
# what to do; a project directory gets no note.
home=$W/h
mkdir "$home"
(cd "$home" && HOME=$home "$VIGIL" validate "$proj/note.yaml") >"$W/o" 2>&1 ||
    fail "validate: $(cat "$W/o")"
grep -qF "note: the working directory is not writable by tasks: '$home' is your home directory; choose a project directory as workdir" "$W/o" ||
    fail "validate in a home directory: $(cat "$W/o")"
"$VIGIL" validate "$proj/note.yaml" >"$W/o" 2>&1 || fail "validate: $(cat "$W/o")"
grep -q "note:" "$W/o" && fail "a note in a project directory: $(cat "$W/o")"

# A session's --workdir.
sdir=$W/sess
mkdir "$sdir"
sid=$("$VIGIL" session start --workdir "$sdir" | tail -1)
cd "$W" || exit 1
"$VIGIL" exec --session "$sid" -- 'pwd; echo s >s.txt' >"$W/o" 2>&1 ||
    fail "session exec: $(cat "$W/o")"
grep -qx "$sdir" "$W/o" || fail "the session did not start in --workdir: $(cat "$W/o")"
[ -f "$sdir/s.txt" ] || fail "the session could not write its --workdir"
"$VIGIL" session start --workdir "$W/nope" >"$W/o" 2>&1 &&
    fail "a missing --workdir was accepted"
grep -q "workdir '$W/nope': No such file or directory" "$W/o" ||
    fail "missing --workdir: $(cat "$W/o")"
"$VIGIL" session stop "$sid" >/dev/null
pass

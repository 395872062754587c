#!/bin/sh
# t0244-session-local.sh - agent sessions on the local backend: the cwd
# and exports persist, output streams, stdin, timeouts kill the tree and
# not the session, background jobs, denials leave the session as it was,
# idle and max-age expiry by the keeper, stop, gc after SIGKILL of the
# keeper, a runner and a foreground vigil, two agents at once
# (session-lib.sh); a forged job record signals nothing of the host.  Every process of a session carries its directory in
# its command line (the wrapper's), so "gone" means pgrep finds none.
set -u
VIGIL=${VIGIL:?}
tmp=$(mktemp -d)
trap 'sessions_down; rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
cd "$tmp" || exit 1
. "$(dirname "$0")/session-lib.sh"

sess_start() { "$VIGIL" session start "$@"; }
sb_gone() {
	! pgrep -f "$VIGIL_HOME/sessions/$1" >/dev/null &&
	    ! pgrep -f 'sleep 301[78]' >/dev/null
}

session_suite

# Local specifics: the first directory is the session's work directory,
# and the command runs confined like a task (no writes outside it).
id=$(sess_start) || fail start
out=$(x "$id" -- pwd)
[ "$out" = "$VIGIL_HOME/sessions/$id/work" ] || fail "first cwd: $out"
x "$id" -- "touch $tmp/outside" 2>/dev/null
[ -e "$tmp/outside" ] && fail "a session command wrote outside its directory"
# The timed-out tree is gone on the host too.
x "$id" --timeout 1 -- 'sleep 62 & sleep 63' 2>/dev/null
sleep 0.3
pgrep -f 'sleep 6[23]' >/dev/null && fail "timed-out tree left on the host"
# TMPDIR is the session's tmp/, kept between commands as a shell's.
x "$id" -- 'f=$(mktemp) && echo kept >"$f" && export TF="$f"' || fail "mktemp"
out=$(x "$id" -- 'echo "$TMPDIR"; cat "$TF"') || fail "temporary file"
[ "$out" = "$VIGIL_HOME/sessions/$id/tmp
kept" ] || fail "session TMPDIR: $out"
# One record per job (kind, command, runner, the shim's proc), and a
# stream without bytes leaves no file; one with bytes keeps them whole.
x "$id" -- 'true' || fail "quiet command"
j=$(ls "$VIGIL_HOME/sessions/$id/cmds" | sort -n | tail -n 1)
d=$VIGIL_HOME/sessions/$id/cmds/$j
[ -e "$d/stdout" ] || [ -e "$d/stderr" ] && fail "a quiet command left output files: $(ls "$d")"
for k in kind command runner proc result; do
	grep -q "^$k " "$d/job" || fail "job record without $k: $(cat "$d/job")"
done
for f in command kind runner proc result.json; do
	[ -e "$d/$f" ] && fail "job $j has a file $f besides its record"
done
x "$id" -- 'printf "a\\b\nc\n"; echo err >&2' >o.txt 2>e.txt || fail "output command"
j=$(ls "$VIGIL_HOME/sessions/$id/cmds" | sort -n | tail -n 1)
d=$VIGIL_HOME/sessions/$id/cmds/$j
[ "$(cat "$d/stdout")" = "$(cat o.txt)" ] || fail "stdout file: $(cat "$d/stdout")"
[ "$(cat "$d/stderr")" = err ] || fail "stderr file: $(cat "$d/stderr")"
# A command of several lines with backslashes: its first line listed.
x "$id" -- 'echo "x\\y" \\n
echo two' >/dev/null || fail "two-line command"
"$VIGIL" session jobs "$id" --json >jobs.txt || fail "jobs"
python3 -c '
import json, sys
j = json.load(open("jobs.txt"))[-1]
assert j["command"] == "echo \"x\\\\y\" \\\\n", j
' || fail "first line of a two-line command: $(cat jobs.txt)"
"$VIGIL" session stop "$id" >/dev/null

# A command can write the session's job records: one that forges a job
# whose runner and shim are a process of the host (its true pid and
# start time) gets it signalled neither by session kill nor by stop.
sleep 3019 &
victim=$!
vstart=$(awk '{ print $22 }' /proc/$victim/stat)
id=$(sess_start) || fail start
x "$id" -- "mkdir -p ../cmds/99 && printf 'kind bg\\ncommand x\\nrunner $victim $vstart 0\\nproc $victim $vstart\\n' >../cmds/99/job" ||
    fail "forging a job record"
grep -q "^runner $victim " "$VIGIL_HOME/sessions/$id/cmds/99/job" ||
    fail "the forged record was not written: $(cat "$VIGIL_HOME/sessions/$id/cmds/99/job" 2>&1)"
"$VIGIL" session kill "$id" 99 >/dev/null 2>&1
"$VIGIL" session stop "$id" >/dev/null || fail "stop after a forged record"
kill -0 $victim 2>/dev/null || fail "a forged job record got a host process signalled"
kill $victim

# The example agent loop runs as documented and leaves nothing open.
top=$(cd "$(dirname "$0")/../.." && pwd)
VIGIL=$VIGIL sh "$top/examples/sessions/agent-loop.sh" >ex.txt 2>ex.err ||
    fail "example: $(cat ex.err)"
grep -q '"stdout":"hello from .*/work/project\\n"' ex.txt || fail "example cwd/env: $(cat ex.txt)"
grep -q '"denied":true' ex.txt || fail "example denial"
grep -q '^tick 3$' ex.txt || fail "example background job"
grep -q '^read: second line$' ex.txt && grep -q '^input closed$' ex.txt ||
	fail "example background input: $(cat ex.txt)"
[ -z "$(sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
    "select id from sessions where ended = 0")" ] || fail "example left a session open"
echo "all passed"

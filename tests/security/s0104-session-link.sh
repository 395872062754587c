#!/bin/sh
# A session command can write its session's directory: it points the
# next command's job directory (cmds/N) at another session's, or at a
# host directory, and plants links for output files.  vigil writes the
# next command's output and records only beneath the session directory,
# never through a link: the other session's files and the host's are
# untouched.
. "$(dirname "$0")/sec-lib.sh"
victim=$tmp/victim
mkdir "$victim"
printf 'original\n' >"$victim/stdout"
other=$("$VIGIL" session start) || fail "session start"
me=$("$VIGIL" session start) || fail "session start"
trap '"$VIGIL" session stop "$me" >/dev/null 2>&1; "$VIGIL" session stop "$other" >/dev/null 2>&1; sec_cleanup' EXIT
x() { timeout 60 "$VIGIL" exec --session "$@" </dev/null; }
x "$other" -- 'echo other-output' >/dev/null || fail "other session"
sd=$VIGIL_HOME/sessions/$me
od=$VIGIL_HOME/sessions/$other
ocmd=$(ls "$od/cmds" | sort -n | tail -n 1)
before=$(cat "$od/cmds/$ocmd/stdout")
x "$me" -- 'true' >/dev/null
n=$(ls "$sd/cmds" | sort -n | tail -n 1)
n1=$((n + 1)) n2=$((n + 2))
# The planting command: the next job directory is the other session's,
# the one after it a host directory.
x "$me" -- "ln -s $od/cmds/$ocmd $sd/cmds/$((n1 + 1)); ln -s $victim $sd/cmds/$((n1 + 2))" >/dev/null
x "$me" -- 'echo pwned-one' >/dev/null 2>&1
x "$me" -- 'echo pwned-two' >/dev/null 2>&1
expect "$(cat "$od/cmds/$ocmd/stdout")" "$before" "the other session's output"
expect "$(cat "$victim/stdout")" original "the host file"
[ ! -e "$victim/job" ] || fail "a job record was written into the host directory"
# A session still works after the attack.
x "$me" -- 'echo fine' >"$tmp/out" 2>/dev/null
grep -q fine "$tmp/out" || fail "the session no longer runs commands: $(cat "$tmp/out")"
# Last: the command replaces cmds/ itself with a link to a host
# directory; the next command's job directory is never made through it.
x "$me" -- "mv $sd/cmds $sd/cmds.old && ln -s $victim $sd/cmds" >/dev/null 2>&1
x "$me" -- 'echo pwned-three' >/dev/null 2>&1
expect "$(ls "$victim")" stdout "the host directory after cmds/ became a link"
echo "s0104: ok"

#!/bin/sh
# A background command started with --open-stdin can write its session's
# directory, and so its own job directory: it replaces its input FIFO
# (cmds/N/stdin) with a link to a host file, and plants a link at the
# close marker (cmds/N/stdin.closed) naming a file that does not exist.
# `vigil session input` refuses the link at the FIFO and writes nothing
# through it; `--close` refuses the marker's link and creates nothing
# through it.
. "$(dirname "$0")/sec-lib.sh"
: >"$tmp/victim"
sid=$("$VIGIL" session start) || fail "session start"
trap '"$VIGIL" session stop "$sid" >/dev/null 2>&1; sec_cleanup' EXIT
j=$("$VIGIL" exec --session "$sid" --background --open-stdin -- \
    'echo up; sleep 30' </dev/null) || fail "exec --open-stdin"
dir=$VIGIL_HOME/sessions/$sid/cmds/$j
[ -p "$dir/stdin" ] || fail "no input FIFO in $dir"
# Once its shell has its input open.
i=0
until grep -q up "$dir/stdout" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the command did not start"
	sleep 0.1
done
# What the command itself could do to its job directory.
rm -f "$dir/stdin" && ln -s "$tmp/victim" "$dir/stdin" || fail "plant stdin"
ln -s "$tmp/created" "$dir/stdin.closed" || fail "plant stdin.closed"
"$VIGIL" session input "$sid" "$j" "secret" >"$tmp/o" 2>&1 &&
	fail "input through a planted link: $(cat "$tmp/o")"
grep -q "is not open" "$tmp/o" || fail "the FIFO's refusal: $(cat "$tmp/o")"
expect "$(cat "$tmp/victim")" "" "the link's target"
# A FIFO of vigil's user back at stdin (with a reader), so that --close
# gets as far as the marker.
rm -f "$dir/stdin" && mkfifo -m 0600 "$dir/stdin" || fail "mkfifo"
(exec 3<>"$dir/stdin"; sleep 30) &
rd=$!
"$VIGIL" session input "$sid" "$j" --close </dev/null >"$tmp/o" 2>&1 &&
	fail "close through a planted marker link: $(cat "$tmp/o")"
grep -q "closing job $j's input" "$tmp/o" ||
	fail "the marker's refusal: $(cat "$tmp/o")"
kill $rd 2>/dev/null
[ ! -e "$tmp/created" ] || fail "the close marker was made through a link"
"$VIGIL" session kill "$sid" "$j" >/dev/null 2>&1
echo "s1402: ok"

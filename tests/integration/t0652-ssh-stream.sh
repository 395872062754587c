#!/bin/sh
# ssh: 100 MB of output streamed into the task's stdout file, byte for
# byte (sha256 computed on the remote side), with the monitor's memory
# flat: its peak RSS (VmHWM, sampled until it exits) stays far below the
# size of the output.
. "$(dirname "$0")/ssh-lib.sh"

# Under AddressSanitizer freed blocks wait in a 256 MB quarantine, which
# would measure ASan, not vigil: keep it small for this measurement.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1
export ASAN_OPTIONS
manifest "$tmp/big.yaml" \
	'command: head -c 100000000 /dev/urandom >data; cat data; sha256sum <data | cut -c1-64 >&2; echo tail'
"$VIGIL" run -q "$tmp/big.yaml" >"$tmp/run.out" 2>"$tmp/run.err" &
vpid=$!
peak=0
while kill -0 "$vpid" 2>/dev/null; do
	for p in $(ps -o pid= --ppid "$vpid" 2>/dev/null); do
		h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$h" ] && [ "$h" -gt "$peak" ] && peak=$h
	done
	sleep 0.1
done
wait "$vpid"
rc=$?
check "vigil exit status" "$rc" 0
check "task" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
d=$(task_dir)
check "100 MB arrived" "$(wc -c <"$d/stdout")" 100000005
check "byte-identical (sha256)" \
	"$(head -c 100000000 "$d/stdout" | sha256sum | cut -c1-64)" \
	"$(cat "$d/stderr")"
check "last line after the data" "$(tail -c 5 "$d/stdout")" "tail"
echo "monitor peak RSS: $peak kB for 100 MB of output"
[ "$peak" -gt 0 ] || { echo "FAIL: the monitor was never sampled"; fail=1; }
[ "$peak" -lt 32768 ] || { echo "FAIL: peak RSS $peak kB >= 32 MB"; fail=1; }
exit $fail

#!/bin/sh
# ssh: the connection dies mid-task (the per-connection sshd processes
# are killed, twice, while output is streaming; the listener stays) and
# vigil reconnects and resumes from its offsets: the output is complete
# and byte-identical (sha256 computed on the remote side), nothing is
# duplicated, and the exit code is the task's.
. "$(dirname "$0")/ssh-lib.sh"

# About 12 MB over 6 s or more, in bursts, then a marker and exit 7.
manifest "$tmp/drop.yaml" \
	'command: |' '  { i=0; while [ $i -lt 60 ]; do head -c 200000 /dev/urandom; echo "chunk $i"; i=$((i + 1)); sleep 0.1; done; } | tee data; sha256sum <data | cut -c1-64 >&2; exit 7'
"$VIGIL" run -q "$tmp/drop.yaml" >"$tmp/run.out" 2>"$tmp/run.err" &
vpid=$!

# Waits until the local stdout holds at least $1 bytes.
wait_bytes() {
	i=0
	while [ $i -lt 600 ]; do
		f=$(ls "$VIGIL_HOME"/runs/*/tasks/0/stdout 2>/dev/null | head -n1)
		[ -n "$f" ] && [ "$(wc -c <"$f")" -ge "$1" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "FAIL: output never reached $1 bytes"
	fail=1
}

killed=0
for at in 1000000 6000000; do
	wait_bytes $at
	for p in $(sshd_conns); do
		kill -9 "$p" 2>/dev/null && killed=$((killed + 1))
	done
done
wait "$vpid"
rc=$?
check "connections were killed" "$([ $killed -ge 2 ] && echo yes)" yes
check "vigil exit status" "$rc" 1
check "task" "$(task_line)" "FAILED exit=7 signal=None reason=exit code 7"
d=$(task_dir)
check "complete: 60 chunks in order" "$(grep -a -o 'chunk [0-9]*$' \
	"$d/stdout" | tr '\n' ' ')" "$(i=0; while [ $i -lt 60 ]; do
	printf 'chunk %d ' $i; i=$((i + 1)); done)"
check "byte-identical (sha256)" "$(sha256sum <"$d/stdout" | cut -c1-64)" \
	"$(cat "$d/stderr")"
check "size" "$(wc -c <"$d/stdout")" \
	"$((60 * 200000 + 10 * 8 + 50 * 9))"
logins=$(grep -c 'Accepted publickey' "$SSHD_DIR/sshd.log")
check "reconnected (3 logins or more)" "$([ "$logins" -ge 3 ] && echo yes)" yes
check "remote dir removed" "$(ls -A "$tmp/remote")" ""
exit $fail

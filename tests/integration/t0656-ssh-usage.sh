#!/bin/sh
# ssh accounting on a loopback sshd: a task whose use is known (200 MB
# touched, 1 s of CPU spun) reports its CPU time (the remote wrapper's
# `times`) and peak memory (/usr/bin/time -f %M), brought back from the
# remote attempt dir; on a host without a usable /usr/bin/time (hidden
# in a mount namespace of a second sshd) the CPU time is still there and
# the peak is null.
. "$(dirname "$0")/ssh-lib.sh"

# The remote host is this machine: the script is at the same path there.
known='command: [python3, "'"$top"'/tests/data/known-use.py"]'
manifest "$tmp/known.yaml" 'resources: { cpus: 1, memory: 1G }' "$known"
"$VIGIL" run "$tmp/known.yaml" >"$tmp/run.out" 2>"$tmp/run.err"
check "known task" "$?" 0
grep -Eq '^vigil: cpu [0-9]+% of requested, peak memory 2[0-9][0-9]M of 1G asked \([0-9]+%\)$' \
    "$tmp/run.err" && echo "ok: efficiency line" ||
    { echo "FAIL: efficiency line: $(cat "$tmp/run.err")"; fail=1; }
"$VIGIL" status last --json >"$tmp/known.json"
if python3 "$top/tests/data/known-usage.py" "$tmp/known.json" \
    --given 1:1073741824 --mem-eff 0.19:0.32
then echo "ok: usage of the known task"
else fail=1
fi
check "remote attempt dir removed" "$(ls "$tmp/remote"/*/0 2>/dev/null)" ""

# A failing task still reports what it used.
manifest "$tmp/fail.yaml" 'command: python3 -c "import sys; sum(range(3000000)); sys.exit(3)"'
vrun "$tmp/fail.yaml"
check "failing task" "$(task_line)" "FAILED exit=3 signal=None reason=exit code 3"
"$VIGIL" status last --json | python3 -c '
import json, sys
u = json.load(sys.stdin)["tasks"][0]["usage"]
assert u["cpu"] > 0 and u["max_rss"] > 0 and u["cpus"] is None, u' &&
    echo "ok: usage of a failed task" || { echo "FAIL: usage of a failed task"; fail=1; }

# A host whose /usr/bin/time is not usable: a second sshd in a mount
# namespace where an empty, non-executable file hides it.
if [ -x /usr/bin/time ] && command -v unshare >/dev/null 2>&1; then
	d2=$tmp/sshd2
	mkdir -p "$d2"
	: >"$d2/notime"
	chmod 644 "$d2/notime"
	port2=$(python3 -c 'import socket; s = socket.socket(); \
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	sed -e "s/^Port .*/Port $port2/" -e "s|^PidFile .*|PidFile $d2/sshd.pid|" \
	    "$SSHD_DIR/sshd_config" >"$d2/sshd_config"
	echo "[127.0.0.1]:$port2 $(cut -d' ' -f1,2 "$SSHD_DIR/host_ed25519.pub")" \
	    >"$d2/known_hosts"
	unshare -m --propagation private sh -c \
	    'mount --bind "$1" /usr/bin/time && exec /usr/sbin/sshd -f "$2" -E "$3"' \
	    sh "$d2/notime" "$d2/sshd_config" "$d2/sshd.log"
	cleanup_extra='[ -s "$d2/sshd.pid" ] && kill "$(cat "$d2/sshd.pid")"'
	i=0
	until [ -s "$d2/sshd.pid" ] || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
	manifest "$tmp/notime.yaml" "$known"
	sed -i -e "s/^  port: .*/  port: $port2/" \
	    -e "s|^  known_hosts: .*|  known_hosts: $d2/known_hosts|" "$tmp/notime.yaml"
	vrun "$tmp/notime.yaml"
	check "task without time(1)" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
	"$VIGIL" status last --json | python3 -c '
import json, sys
u = json.load(sys.stdin)["tasks"][0]["usage"]
assert 1.0 <= u["cpu"] <= 3.0 and u["max_rss"] is None, u' &&
	    echo "ok: CPU without time(1), no peak" ||
	    { echo "FAIL: usage without time(1): $("$VIGIL" status --json last)"; fail=1; }
	"$VIGIL" status last >"$tmp/st"
	grep -Eq '^ +0  SUCCEEDED +0 +1 +[0-9.]+s +[0-9.]+s +- ' "$tmp/st" &&
	    echo "ok: no peak shows as -" ||
	    { echo "FAIL: status table: $(cat "$tmp/st")"; fail=1; }
else
	echo "FAIL: /usr/bin/time or unshare missing: the case without time(1) cannot be set up"
	fail=1
fi
exit $fail

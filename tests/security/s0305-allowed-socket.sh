#!/bin/sh
# s0305: isolation.sockets leaves a host socket reachable, but only when
# a policy rule of category host-access allows its path: without one the
# run is refused before any task starts and the listener sees nothing;
# with one the task connects (at standard and at strict).  A relative
# path is refused with the field named.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/sock-lib.sh"
run=$(mktemp -d /run/vigil-sec-XXXXXX)
sock_dirs=$run
s=$run/docker.sock
listen "$s" "$tmp/log"
job "$tmp/j.yaml" standard "$(connect_cmd "$s")" "  sockets: [$s]"
"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1 && fail "run without a rule succeeded"
grep -q "host access refused: isolation.sockets '$s' reaches a host socket; binding it needs a policy allow rule with category 'host-access' matching '$s'" "$tmp/out" ||
    fail "refusal: $(cat "$tmp/out")"
rm -rf "$VIGIL_HOME"
expect "$(saw "$tmp/log")" "" "connections without a rule"
for level in standard strict; do
	job "$tmp/j.yaml" "$level" "$(connect_cmd "$s")" "  sockets: [$s]
policy:
  allow:
    - id: engine
      category: host-access
      match: '$run/*'
      reason: the task drives the engine"
	"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1
	out=$(cat "$VIGIL_HOME"/runs/*/tasks/0/stdout 2>/dev/null | tail -1)
	rm -rf "$VIGIL_HOME"
	expect "$out" "connected" "$level task to an allowed socket ($(cat "$tmp/out"))"
done
expect "$(saw "$tmp/log")" "connection
connection" "connections with the rule"
job "$tmp/j.yaml" standard true "  sockets: [run/docker.sock]"
"$VIGIL" run "$tmp/j.yaml" >"$tmp/out" 2>&1 && fail "relative socket path accepted"
grep -q "isolation.sockets: 'run/docker.sock' is not an absolute path" "$tmp/out" ||
    fail "relative path: $(cat "$tmp/out")"
echo "ok: isolation.sockets with a host-access rule, refused without"

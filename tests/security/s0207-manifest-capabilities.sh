#!/bin/sh
# A capability a task keeps is host access: isolation.capabilities names
# it, and only a policy rule of category host-access (or auto-approve)
# lets the task run with it; then the task holds that one and no other.
# Without the rule the task is DENIED and never runs (it would have bound
# a port below 1024 as root).  A name that is no capability is refused
# with the valid ones listed.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sec-lib.sh"
. "$here/powers-lib.sh"
cat >"$tmp/a.py" <<'P'
import socket
eff = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")]
print("eff", eff[0])
s = socket.socket()
s.bind(("127.0.0.1", 81))
print("bound")
open(__import__("os").environ["VIGIL_TASK_DIR"] + "/ran", "w").close()
P
caps="  readable: [$tmp]
  capabilities: [net_bind_service]"
for level in standard strict; do
	task_run "$level" "python3 $tmp/a.py" "$caps"
	expect "$(task_field state)" DENIED "$level: without a host-access rule"
	case "$(task_field reason)" in "host access refused: isolation.capabilities 'net_bind_service'"*) ;;
	*) fail "$level: reason: $(task_field reason)" ;; esac
	[ -e "$VIGIL_HOME/runs/$rid/tasks/0/ran" ] && fail "$level: the task ran"

	task_run "$level" "python3 $tmp/a.py" "$caps
policy:
  allow:
    - id: low-port
      category: host-access
      match: '*'
      reason: serves on port 81"
	expect "$(task_field state)" SUCCEEDED "$level: allowed ($(task_out))"
	expect "$(task_out)" "eff 0000000000000400
bound" "$level: the one capability kept"
done

task_run standard true "  capabilities: [net_bind_servic]"
grep -q "'isolation.capabilities': 'net_bind_servic' is not a capability (valid, with or without cap_: chown, " "$tmp/run.out" ||
    fail "bad name: $(cat "$tmp/run.out")"
echo "ok: a kept capability is host access, judged by the policy"

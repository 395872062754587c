#!/bin/sh
# Apptainer containers run with --no-privs: a task started by root keeps
# none of root's capabilities inside.  The test gives root capabilities
# in this run's apptainer configuration (root default capabilities =
# file, with a capability.json granting CAP_SYS_ADMIN, CAP_CHOWN,
# CAP_SYS_PTRACE and more; bound over the shared root's files inside the
# wrapper's namespace only) and shows that apptainer alone keeps them,
# then that a vigil task cannot mount, cannot chown a file it does not
# own, and cannot read the host's /proc/1/environ; singularity.add_caps
# with a host-access rule gives back just the capability named.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
unset APPTAINER_WRAP_BINDS
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (the test is about root's capabilities)"; exit 77; }

sed 's/^root default capabilities = .*/root default capabilities = file/' \
	"$APPTAINER_ROOT/etc/apptainer/apptainer.conf" >"$tmp/apptainer.conf"
grep -q '^root default capabilities = file' "$tmp/apptainer.conf" ||
	fail "could not set root default capabilities in the test config"
cat >"$tmp/capability.json" <<'J'
{"users": {"root": ["CAP_SYS_ADMIN", "CAP_CHOWN", "CAP_DAC_OVERRIDE",
  "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER"]}, "groups": {}}
J
APPTAINER_WRAP_CONF=$tmp/apptainer.conf
APPTAINER_WRAP_CAPS=$tmp/capability.json
export APPTAINER_WRAP_CONF APPTAINER_WRAP_CAPS

# Without --no-privs root keeps the configured capabilities: the checks
# below would pass for the wrong reason otherwise.
eff=$(cd "$tmp" && "$APPTAINER_WRAP" exec --containall "$BUSYBOX_SIF" \
	sh -c 'grep CapEff /proc/self/status' 2>&1)
expect "$eff" "CapEff:	000000000028000f" "root's capabilities under apptainer alone"
(cd "$tmp" && "$APPTAINER_WRAP" exec --containall "$BUSYBOX_SIF" \
	sh -c 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m') ||
	fail "apptainer alone: root could not mount (the test setup is wrong)"
# A root process of the host with a secret in its environment (PID 1
# stands for it: this sandbox's PID 1 is not readable even by the host's
# root).
env VIGIL_T0530_SECRET=s3cret sleep 300 &
spid=$!
trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
# Until env(1) has exec'd sleep, the process still has the shell's
# environment.
n=0
while ! grep -q VIGIL_T0530_SECRET "/proc/$spid/environ" 2>/dev/null &&
    [ $n -lt 100 ]; do
	sleep 0.02; n=$((n + 1))
done
grep -q VIGIL_T0530_SECRET "/proc/$spid/environ" ||
	fail "the host's root cannot read /proc/$spid/environ"
(cd "$tmp" && "$APPTAINER_WRAP" exec "$BUSYBOX_SIF" \
	grep -q VIGIL_T0530_SECRET "/proc/$spid/environ") ||
	fail "apptainer alone: root could not read /proc/$spid/environ"

# The gate would refuse mount and chown before the container is reached;
# these rules let the commands through so the container itself is tested.
gate1="policy:"
gate2="  allow:"
gate3="    - {id: try-mount, category: raw-disk, reason: the test shows it fails}"
gate4="    - {id: try-chown, category: permissions, reason: the test shows it fails}"
gate5="    - {id: try-read, category: exfiltration, reason: the test shows it fails}"

mkdir -p "$tmp/own"
echo data >"$tmp/own/f"
chown 1234:1234 "$tmp/own/f"

# Under vigil: no capabilities, no mount, no chown.
m=$(mf noprivs "'grep CapEff /proc/self/status; mkdir -p /tmp/m; mount -t tmpfs none /tmp/m 2>/dev/null && echo mounted || echo no-mount; chown 0:0 /own/f 2>/dev/null && echo chowned || echo no-chown'" \
	"singularity:" "  binary: $APPTAINER_WRAP" "  binds: ['$tmp/own:/own']" \
	"$gate1" "$gate2" "$gate3" "$gate4")
vrun "$m"
expect "$vrc" "0" "exit status ($(cat "$tmp/run.err"))"
expect "$("$VIGIL" logs "$rid/0")" "CapEff:	0000000000000000
no-mount
no-chown" "a root task without root's capabilities"
expect "$(stat -c %u "$tmp/own/f")" "1234" "owner kept on the host"

# The host's PID 1: with --containall it is not even visible (own PID
# namespace); without it, a root process's environ is not readable.
m=$(mf pid1 "'cat /proc/1/cmdline | tr \"\\\\0\" \" \"; echo; cat /proc/1/environ >/dev/null 2>&1 && echo read || echo no-read'" \
	"$gate1" "$gate2" "$gate5")
vrun "$m"
expect "$vrc" "0" "exit status ($(cat "$tmp/run.err"))"
host1=$(tr '\0' ' ' </proc/1/cmdline)
[ "$("$VIGIL" logs "$rid/0" | head -n 1)" != "$host1" ] ||
	fail "the host's PID 1 is visible under --containall"
m=$(mf pid1host "'cat /proc/$spid/environ >/dev/null 2>&1 && echo read || echo no-read'" \
	"singularity:" "  binary: $APPTAINER_WRAP" "  containall: false" \
	"$gate1" "$gate2" "$gate5")
vrun "$m"
expect "$vrc" "0" "exit status ($(cat "$tmp/run.err"))"
expect "$("$VIGIL" logs "$rid/0")" "no-read" "a host root process's environ"

# add_caps is host access: refused without a rule, before anything runs.
m=$(mf caps "'chown 0:0 /own/f && echo chowned; mount -t tmpfs none /tmp 2>/dev/null && echo mounted || echo no-mount'" \
	"singularity:" "  binary: $APPTAINER_WRAP" "  binds: ['$tmp/own:/own']" \
	"  add_caps: [CAP_CHOWN]" "$gate1" "$gate2" "$gate3" "$gate4")
vrun "$m"
expect "$vrc" "2" "exit status of add_caps without a rule"
expect "$(cat "$tmp/run.err")" "$m:9:3: error: host access refused: singularity.add_caps 'CAP_CHOWN' adds a capability; allow with a policy rule of category host-access
    9 |   add_caps: [CAP_CHOWN]
      |   ^" "add_caps refused"
expect "$(stat -c %u "$tmp/own/f")" "1234" "owner kept on refusal"
# With a rule the task gets exactly that capability.
echo "    - {id: chown-ok, category: host-access, reason: the task fixes ownership}" >>"$m"
vrun "$m"
expect "$vrc" "0" "exit status with a rule ($(cat "$tmp/run.err"))"
expect "$("$VIGIL" logs "$rid/0")" "chowned
no-mount" "CAP_CHOWN given back, CAP_SYS_ADMIN not"
expect "$(stat -c %u "$tmp/own/f")" "0" "chown reached the host file"
echo "ok: t0530"

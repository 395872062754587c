# ssh-lib.sh - shared setup of the t065x-ssh tests (sourced).
#
# Starts a private sshd on loopback through tests/harness/sshd-up in a
# temp dir removed on exit (the remote host is this machine, reached as
# the current user through that sshd), and defines:
#   manifest FILE [YAML LINES...]  writes a manifest with backend ssh and
#                          the ssh section for the private sshd; extra
#                          lines are appended (command:, timeout:, ...)
#   vrun FILE              vigil run -q FILE; sets $rc
#   task_line [N]          "STATE exit=E signal=S reason=R" of task N of
#                          the last run (vigil status --json)
#   task_dir [N]           the local task dir of the last run
#   sshd_conns             pids of the sshd processes serving connections
#   check NAME GOT WANT    fails the test when GOT != WANT
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${VIGIL:?VIGIL must name the vigil binary under test}"
tmp=$(mktemp -d /tmp/vigil-t065.XXXXXX)
VIGIL_HOME=$tmp/home
export VIGIL_HOME
mkdir -p "$VIGIL_HOME" "$tmp/remote"
# A private agent socket would change the auth path; tests pin it off.
unset SSH_AUTH_SOCK
cleanup() {
	[ -n "${cleanup_extra:-}" ] && eval "$cleanup_extra"
	"$top/tests/harness/sshd-down" "$tmp/sshd"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
if ! "$top/tests/harness/sshd-up" "$tmp/sshd" >"$tmp/sshd-up.out" \
	2>"$tmp/sshd-up.log"; then
	echo "sshd could not start:" >&2
	cat "$tmp/sshd-up.log" >&2
	exit 1
fi
eval "$(cat "$tmp/sshd-up.out")"
fail=0

manifest() {
	f=$1
	shift
	{
		echo "version: 1"
		echo "name: ssh-test"
		echo "backend: ssh"
		echo "ssh:"
		echo "  host: 127.0.0.1"
		echo "  port: $SSHD_PORT"
		echo "  user: $SSHD_USER"
		echo "  identity: $SSHD_KEY"
		echo "  known_hosts: $SSHD_KNOWN_HOSTS"
		echo "  remote_dir: $tmp/remote"
		for l in "$@"; do
			printf '%s\n' "$l"
		done
	} >"$f"
}

vrun() {
	"$VIGIL" run -q "$@" >"$tmp/run.out" 2>"$tmp/run.err"
	rc=$?
}

task_line() {
	"$VIGIL" status --json last | python3 -c '
import json, sys
t = json.load(sys.stdin)["tasks"][int(sys.argv[1])]
print("%s exit=%s signal=%s reason=%s" % (t["state"], t["exit_code"],
    t["signal"], t["reason"] or ""))' "${1:-0}"
}

task_dir() {
	echo "$("$VIGIL" status --json last | python3 -c '
import json, sys; print(json.load(sys.stdin)["dir"])')/tasks/${1:-0}"
}

sshd_conns() {
	ps -o pid= --ppid "$SSHD_PID" 2>/dev/null | tr -d ' '
}

check() {
	if [ "$2" = "$3" ]; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		echo "  got:  $2"
		echo "  want: $3"
		fail=1
	fi
}

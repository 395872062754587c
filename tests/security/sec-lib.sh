# sec-lib.sh - sourced by tests/security/s*.sh.  Sets up a private
# VIGIL_HOME and work directory under /tmp, removed at exit, and gives
# fail/expect helpers.  The attacks need root (vigil runs as root on an
# agent host); without it a test skips.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
expect() { [ "$1" = "$2" ] || fail "$3: expected
'$2', got
'$1'"; }
[ "$(id -u)" = 0 ] || skip "the hostile-task suite runs as root (vigil's agent-host case)"
sec_name=$(basename "$0" .sh)
sec_dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "/tmp/vigil-$sec_name.XXXXXX")
chmod 755 "$tmp"
sec_cleanup() { rm -rf "$tmp"; }
trap 'sec_cleanup' EXIT
VIGIL_HOME=$tmp/home
export VIGIL_HOME
cd "$tmp" || exit 1
# sec_podman_up: a private podman serving the Docker Engine API for the
# test (its run root short: a directory of its own), DOCKER_HOST
# exported; sec_extra (a command) runs first at exit, then podman stops.
sec_podman_up() {
	sec_pm=$(mktemp -d /tmp/vg-pm.XXXXXX)
	sec_cleanup() {
		[ -n "${sec_extra:-}" ] && eval "$sec_extra"
		"$sec_dir/../harness/podman-down" "$sec_pm/pm" >/dev/null 2>&1
		rm -rf "$tmp" "$sec_pm"
	}
	"$sec_dir/../harness/podman-up" "$sec_pm/pm" >"$tmp/podman-up.log" \
	    2>&1 || fail "podman could not start: $(cat "$tmp/podman-up.log")"
	DOCKER_HOST=unix://$sec_pm/pm/podman.sock
	export DOCKER_HOST
}

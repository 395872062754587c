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

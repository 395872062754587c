# docker-lib.sh - shared setup of the t06xx-docker tests (sourced).
#
# Starts a private podman service through tests/harness/podman-up in a
# temp dir removed on exit, exports DOCKER_HOST, and defines:
#   DA        the backend driver (build/<variant>/tests/docker-attempt)
#   api       curl on the engine socket: api METHOD PATH [curl args]
#   vigil_containers [LABEL]   Ids of containers labelled vigil=1 (and LABEL)
#   check NAME GOT WANT        fails the test when GOT != WANT
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${VIGIL:?VIGIL must name the vigil binary under test}"
DA=$(dirname "$VIGIL")/tests/docker-attempt
if [ ! -x "$DA" ]; then
	echo "missing $DA: build it with 'make tests'" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/vigil-t06.XXXXXX)
VIGIL_HOME=$tmp/home
export VIGIL_HOME
mkdir -p "$VIGIL_HOME" "$tmp/task"
cleanup() {
	[ -n "${cleanup_extra:-}" ] && eval "$cleanup_extra"
	"$top/tests/harness/podman-down" "$tmp/pm"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
if ! "$top/tests/harness/podman-up" "$tmp/pm" >"$tmp/podman-up.log" 2>&1
then
	echo "podman could not start:" >&2
	cat "$tmp/podman-up.log" >&2
	exit 1
fi
DOCKER_HOST=unix://$tmp/pm/podman.sock
export DOCKER_HOST
fail=0

api() {
	m=$1 p=$2
	shift 2
	curl -s --unix-socket "$tmp/pm/podman.sock" -X "$m" "$@" "http://d$p"
}

vigil_containers() {
	f='{"label":["vigil=1"'${1:+,\"$1\"}']}'
	api GET /v1.41/containers/json -G --data-urlencode all=1 \
		--data-urlencode "filters=$f" |
		python3 -c 'import json,sys; [print(c["Id"]) for c in json.load(sys.stdin)]'
}

check() {
	if [ "$2" = "$3" ]; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		echo "  got:  $(printf '%s' "$2" | od -c | head -5)"
		echo "  want: $(printf '%s' "$3" | od -c | head -5)"
		fail=1
	fi
}

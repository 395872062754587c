#!/bin/sh
# t0812-cloud-session-modal.sh - agent sessions on the modal backend
# through tests/harness/fake-modal-gateway.py (the managed gateway's REST
# protocol): one gateway sandbox per session, each command POST
# .../execs of the session wrapper polled to its end, .../cancel on a
# timeout, .../terminate on close.  The gateway reports a command's
# output once, stdout and stderr together (SESS_MERGED); "gone" means the
# gateway no longer knows the sandbox.  Sessions through the direct gRPC
# API are refused with what to set.
set -u
. "$(dirname "$0")/engine-lib.sh"
. "$(dirname "$0")/session-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
GW_PID=
trap 'sessions_down; [ -n "$GW_PID" ] && kill "$GW_PID"; rm -rf "$W"' EXIT
unset MODAL_TOKEN_ID MODAL_TOKEN_SECRET MODAL_PROFILE MODAL_SERVER_URL \
    MODAL_ENVIRONMENT MODAL_GATEWAY_URL
MODAL_CONFIG_PATH=$W/none.toml; export MODAL_CONFIG_PATH
cd "$W" || exit 1
mkdir -p gw cfg
python3 "$top/tests/harness/fake-modal-gateway.py" --dir "$W/gw" \
    --token gw-tok$$ 2>"$W/gw/stderr" &
GW_PID=$!
i=0
until [ -s "$W/gw/port" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "gateway did not start"
	sleep 0.1
done
GW=http://127.0.0.1:$(cat "$W/gw/port")
TOOL_GATEWAY_USER_TOKEN=gw-tok$$; export TOOL_GATEWAY_USER_TOKEN
printf 'modal:\n  gateway_url: %s\n' "$GW" >"$W/cfg/config.yaml"
VIGIL_USER_CONFIG=$W/cfg/config.yaml; export VIGIL_USER_CONFIG
SESS_MERGED=1

sess_start() {
	"$VIGIL" session start --backend modal --image debian:12 "$@"
}
handle() {
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select handle from sessions where id = '$1'"
}
# The gateway answers 404 for a sandbox it no longer has.
sb_gone() {
	h=$(handle "$1")
	[ -n "$h" ] || return 0
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST \
	    -H "Authorization: Bearer gw-tok$$" -H 'Content-Type: application/json' \
	    -d '{}' "$GW/v1/sandboxes/$h/execs/none/cancel")" = 404 ]
}

session_suite

# The direct API has no exec calls here: refused, saying what to set.
MODAL_TOKEN_ID=ak MODAL_TOKEN_SECRET=as \
    "$VIGIL" session start --backend modal --image debian:12 \
    --set modal.mode=direct 2>err.txt
[ $? -ne 0 ] || fail "direct session started"
grep -q "sessions run through a tool gateway" err.txt || fail "direct: $(cat err.txt)"
echo "all passed"

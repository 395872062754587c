#!/bin/sh
# t0901-mcp-sdk.sh - vigil mcp driven by the official MCP TypeScript SDK
# (@modelcontextprotocol/sdk, Client + StdioClientTransport) from the npm
# registry, pinned, installed into build/sdk-npm-mcp (VIGIL_SDK_CACHE
# with "-mcp" appended), outside the tracked tree: the handshake, every
# tool, a denial, progress, a cancellation and a client that goes away
# mid-command with no process left (tests/harness/sdk/mcp-client.mjs);
# the example agent loop; and the MCP Inspector's command line
# (@modelcontextprotocol/inspector, `mcp-inspector --cli`, in its own
# cache directory beside it) for tools/list and tools/call.
set -u
VIGIL=${VIGIL:?}
top=$(cd "$(dirname "$0")/../.." && pwd)
MCP_SDK=1.32.2
INSPECTOR=0.17.2
SDK=${VIGIL_SDK_CACHE:-$top/build/sdk-npm}-mcp
tmp=$(mktemp -d)
W=$tmp
trap 'sessions_down; rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
cd "$tmp" || exit 1
. "$top/tests/integration/session-lib.sh"
skip() { echo "skipped: $*"; exit 77; }
. "$top/tests/integration/sdk-lib.sh"
sdk_need_node
sdk_install "$SDK" "@modelcontextprotocol/sdk@$MCP_SDK"
sdk_installed "$SDK" @modelcontextprotocol/sdk $MCP_SDK ||
    fail "the SDK install in $SDK does not hold $MCP_SDK"

printf 'version: 1\nname: mcp\ncommand: echo from mcp\n' >"$tmp/m.yaml"
timeout 180 node "$top/tests/harness/sdk/mcp-client.mjs" "$SDK" "$VIGIL" \
    "$tmp/m.yaml" >"$tmp/client.out" 2>&1 ||
    fail "the SDK client: $(cat "$tmp/client.out")"
grep '^ok ' "$tmp/client.out"
tail -n 1 "$tmp/client.out" | grep -qx 'all passed' ||
    fail "the SDK client stopped early: $(tail -n 5 "$tmp/client.out")"

# The example's agent loop (docs/mcp.md) runs as documented.
timeout 60 node "$top/examples/mcp/agent-loop.mjs" "$SDK" "$VIGIL" \
    >"$tmp/ex.out" 2>&1 || fail "examples/mcp/agent-loop.mjs: $(cat "$tmp/ex.out")"
grep -q '^ran: ls && pwd: exit 0, stdout "m.c\\n.*/work/build\\n"$' \
    "$tmp/ex.out" || fail "example: the session keeps cwd: $(cat "$tmp/ex.out")"
grep -q "^refused: rm -rf /: the gate says deny: deny: destructive" \
    "$tmp/ex.out" || fail "example: the refusal: $(cat "$tmp/ex.out")"
grep -q '^ran: echo step done; exit 2: exit 2, stdout "step done\\n"$' \
    "$tmp/ex.out" || fail "example: the last step: $(cat "$tmp/ex.out")"
echo "ok examples/mcp/agent-loop.mjs"

# The Inspector's command line: each call starts its own server.
( sdk_install "$SDK-inspector" "@modelcontextprotocol/inspector@$INSPECTOR" )
case $? in
0) ;;
77) echo "inspector skipped: npm install of @modelcontextprotocol/inspector@$INSPECTOR failed"
    INSPECTOR= ;;
*) fail "inspector install" ;;
esac
insp() {
	timeout 60 "$SDK-inspector/node_modules/.bin/mcp-inspector" --cli \
	    "$VIGIL" mcp "$@" 2>"$tmp/insp.err"
}
if [ -n "$INSPECTOR" ]; then
	out=$(insp --method tools/list) ||
	    fail "inspector tools/list: $(cat "$tmp/insp.err")"
	printf "%s\n" "$out" | grep -q '"name": "gate_check"' ||
	    fail "inspector tools/list: $out"
	echo "ok inspector tools/list"
	out=$(insp --method tools/call --tool-name exec \
	    --tool-arg 'command=echo via-inspector') ||
	    fail "inspector tools/call: $(cat "$tmp/insp.err")"
	printf "%s\n" "$out" | grep -q '"stdout": "via-inspector\\n"' ||
	    fail "inspector tools/call: $out"
	echo "ok inspector tools/call"
	out=$(insp --method tools/call --tool-name exec \
	    --tool-arg 'command=rm -rf /')
	printf "%s\n" "$out" | grep -q '"isError": true' &&
	    printf "%s\n" "$out" | grep -q '"denied": true' ||
	    fail "inspector denial: $out"
	echo "ok inspector denial"
fi

[ -z "$(sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
    "select id from sessions where ended = 0")" ] ||
    fail "a session the server opened is left open"
echo "all passed"

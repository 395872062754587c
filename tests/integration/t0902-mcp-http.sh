#!/bin/sh
# t0902-mcp-http.sh - vigil mcp --listen, the Streamable HTTP transport,
# driven by the official MCP TypeScript SDK (StreamableHTTPClientTransport,
# the same checks as t0901 over stdio: the handshake, every tool, a
# denial, progress, a cancellation, a client that disconnects
# mid-command with no process left; tests/harness/sdk/mcp-client.mjs)
# against 127.0.0.1 on a port the kernel picked; the MCP Inspector's
# command line with --transport http; two clients at once; a unix
# socket (mode 0600) driven with curl; the HTTP answers of the protocol
# (session id required, unknown session, GET 405, DELETE); the
# refusals of --listen and --token-file; nothing left running or open
# when the server ends.  The attacks are s1401's.
set -u
VIGIL=${VIGIL:?}
top=$(cd "$(dirname "$0")/../.." && pwd)
MCP_SDK=1.32.2
INSPECTOR=0.17.2
SDK=${VIGIL_SDK_CACHE:-$top/build/sdk-npm}-mcp
tmp=$(mktemp -d)
W=$tmp
srv=
trap 'server_down; sessions_down; rm -rf "$tmp"' EXIT
export VIGIL_HOME="$tmp/home"
cd "$tmp" || exit 1
. "$top/tests/integration/session-lib.sh"
skip() { echo "skipped: $*"; exit 77; }
. "$top/tests/integration/sdk-lib.sh"
command -v curl >/dev/null || skip "curl is not installed"

# server_up ADDR [ARGS...]: starts vigil mcp --listen ADDR in the
# background; sets srv (its pid), url and token from what it printed.
server_up() {
	_a=$1
	shift
	"$VIGIL" mcp --listen "$_a" "$@" 2>"$tmp/srv.err" &
	srv=$!
	for _i in $(seq 100); do
		grep -q 'serving MCP over HTTP' "$tmp/srv.err" && break
		sleep 0.1
	done
	url=$(sed -n 's/.* at \(http:[^,]*\), gate.*/\1/p' "$tmp/srv.err")
	token=$(sed -n 's/^vigil: mcp: bearer token: //p' "$tmp/srv.err")
	grep -q 'serving MCP over HTTP' "$tmp/srv.err" ||
	    fail "vigil mcp --listen $_a did not start: $(cat "$tmp/srv.err")"
}
# server_down: SIGTERM, and the server's exit status.
server_down() {
	[ -n "$srv" ] || return 0
	kill -TERM "$srv" 2>/dev/null
	wait "$srv"
	_st=$?
	srv=
	return $_st
}
# post [CURL-ARGS...] JSON: POSTs JSON to url with the token; prints
# the response head and body (curl -i) without CRs.
post() {
	_n=$# _i=0
	for _a in "$@"; do
		_i=$((_i + 1))
		if [ $_i -eq $_n ]; then _b=$_a; else set -- "$@" "$_a"; fi
	done
	shift $_n
	curl -s -i --max-time 30 -X POST -H "Authorization: Bearer $token" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    "$@" -d "$_b" "$url" | tr -d '\r'
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'

# --listen and --token-file refusals, each with its reason.
for bad in '0.0.0.0:0' '192.168.1.1:8080' 'example.com:80' '[::]:0' \
    '127.0.0.1:70000' '127.0.0.1:' '8080' 'unix:'; do
	"$VIGIL" mcp --listen "$bad" </dev/null >/dev/null 2>"$tmp/err"
	st=$?
	[ $st -eq 2 ] || fail "--listen '$bad' exits $st, not 2"
	grep -qF "listen '$bad'" "$tmp/err" && grep -q \
	    "valid: 127.0.0.1:PORT\|a unix socket path of 1 to" "$tmp/err" ||
	    fail "--listen '$bad': $(cat "$tmp/err")"
done
"$VIGIL" mcp --listen 0.0.0.0:0 </dev/null 2>&1 | grep -q \
    "'0.0.0.0' is not a loopback address: the server is for this machine only" ||
    fail "0.0.0.0 refused without its reason"
"$VIGIL" mcp --token-file /nonexistent </dev/null 2>&1 | grep -q \
    -- '--token-file goes with --listen' || fail "--token-file alone"
printf 'short\n' >"$tmp/tok.short"
chmod 600 "$tmp/tok.short"
"$VIGIL" mcp --listen 127.0.0.1:0 --token-file "$tmp/tok.short" \
    </dev/null 2>&1 | grep -q "the token is at least 16 characters" ||
    fail "a short token accepted"
printf 'has a space inside it\n' >"$tmp/tok.space"
chmod 600 "$tmp/tok.space"
"$VIGIL" mcp --listen 127.0.0.1:0 --token-file "$tmp/tok.space" \
    </dev/null 2>&1 | grep -q "byte 4 of the token is not a printable" ||
    fail "a token with a space accepted"
echo "ok --listen and --token-file refusals"

sdk_need_node
sdk_install "$SDK" "@modelcontextprotocol/sdk@$MCP_SDK"
sdk_installed "$SDK" @modelcontextprotocol/sdk $MCP_SDK ||
    fail "the SDK install in $SDK does not hold $MCP_SDK"

# A token from a file: only its owner may read it.
printf 'a-token-from-a-file-0123456789\n' >"$tmp/tok"
chmod 600 "$tmp/tok"
server_up 127.0.0.1:0 --token-file "$tmp/tok"
[ -z "$token" ] || fail "a token from a file is printed"
token=a-token-from-a-file-0123456789
out=$(post "$init")
printf '%s\n' "$out" | grep -q '^HTTP/1.1 200' ||
    fail "the file's token is refused: $out"
sid=$(printf '%s\n' "$out" | sed -n 's/^Mcp-Session-Id: //p')
printf '%s\n' "$sid" | grep -qx '[0-9a-f]\{32\}' ||
    fail "no Mcp-Session-Id at initialize: $out"
echo "ok --token-file"

# The protocol's HTTP answers.
out=$(post '{"jsonrpc":"2.0","id":2,"method":"ping"}')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 400' &&
    printf '%s\n' "$out" | grep -q 'Mcp-Session-Id is required' ||
    fail "a request without a session: $out"
out=$(post -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef" \
    '{"jsonrpc":"2.0","id":2,"method":"ping"}')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 404' ||
    fail "an unknown session: $out"
out=$(post -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: 1999-01-01" \
    '{"jsonrpc":"2.0","id":2,"method":"ping"}')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 400' &&
    printf '%s\n' "$out" | grep -q 'not a revision served' ||
    fail "an unknown protocol revision: $out"
out=$(post -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: 2025-06-18" \
    '{"jsonrpc":"2.0","id":2,"method":"ping"}')
printf '%s\n' "$out" | grep -q '^{"jsonrpc":"2.0","id":2,"result":{}}$' ||
    fail "ping: $out"
out=$(post -H "Mcp-Session-Id: $sid" \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 202' ||
    fail "a notification is not 202: $out"
out=$(post -H "Mcp-Session-Id: $sid" '{"jsonrpc":"2.0","id":3,')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 400' &&
    printf '%s\n' "$out" | grep -q '"code":-32700' ||
    fail "a body that is not JSON: $out"
out=$(curl -s -i -H "Authorization: Bearer $token" "$url" | tr -d '\r')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 405' &&
    printf '%s\n' "$out" | grep -q '^Allow: POST, DELETE' ||
    fail "GET: $out"
out=$(curl -s -i -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: text/plain' -d '{}' "$url" | tr -d '\r')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 415' || fail "text/plain: $out"
out=$(curl -s -i -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d '{}' "${url%/mcp}/other" |
    tr -d '\r')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 404' || fail "another path: $out"
out=$(curl -s -i -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -H 'Accept: text/html' -d '{}' \
    "$url" | tr -d '\r')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 406' || fail "Accept text/html: $out"
hostport=${url#http://}
hostport=${hostport%/mcp}
printf 'POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n\r\n' \
    "$hostport" "$token" | python3 "$top/tests/harness/http-raw.py" \
    "$hostport" >"$tmp/raw"
head -n 1 "$tmp/raw" | grep -q '^HTTP/1.1 411 Length Required' ||
    fail "a POST without Content-Length: $(cat "$tmp/raw")"
printf 'POST /mcp HTTP/2.0\r\nHost: %s\r\n\r\n' "$hostport" |
    python3 "$top/tests/harness/http-raw.py" "$hostport" >"$tmp/raw"
head -n 1 "$tmp/raw" | grep -q '^HTTP/1.1 505' ||
    fail "HTTP/2.0: $(cat "$tmp/raw")"
printf 'GET /%s HTTP/1.1\r\nHost: %s\r\n\r\n' "$(head -c 3000 /dev/zero |
    tr '\0' a)" "$hostport" | python3 "$top/tests/harness/http-raw.py" \
    "$hostport" >"$tmp/raw"
head -n 1 "$tmp/raw" | grep -q '^HTTP/1.1 414' ||
    fail "a target of 3000 bytes: $(cat "$tmp/raw")"
out=$(post -H "Mcp-Session-Id: $sid" "$init")
printf '%s\n' "$out" | grep -q '^HTTP/1.1 400' &&
    printf '%s\n' "$out" | grep -q 'send it without Mcp-Session-Id' ||
    fail "initialize in a session: $out"
# Two requests with one id at once: the second is refused.
post -H "Mcp-Session-Id: $sid" '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 2"}}}' >"$tmp/long" &
lp=$!
sleep 0.7
out=$(post -H "Mcp-Session-Id: $sid" '{"jsonrpc":"2.0","id":9,"method":"ping"}')
printf '%s\n' "$out" | grep -q 'a request with this id is in progress' ||
    fail "two requests with one id: $out"
wait $lp
grep -q '"id":9,"result"' "$tmp/long" || fail "the first request 9: $(cat "$tmp/long")"
# At most 32 MCP sessions at once.
n=1
while [ $n -lt 32 ]; do
	post "$init" | grep -q '^Mcp-Session-Id: ' || fail "session $n: refused"
	n=$((n + 1))
done
out=$(post "$init")
printf '%s\n' "$out" | grep -q '^HTTP/1.1 503' &&
    printf '%s\n' "$out" | grep -q '32 MCP sessions are open' ||
    fail "a 33rd session: $out"
echo "ok 406, 411, 414, 505, initialize in a session, a duplicate id, the session limit"
# A tool call streams its answer (text/event-stream) with progress.
out=$(post -H "Mcp-Session-Id: $sid" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 1.5; echo streamed"},"_meta":{"progressToken":"p4"}}}')
printf '%s\n' "$out" | grep -q '^Content-Type: text/event-stream' &&
    printf '%s\n' "$out" | grep -q '^data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p4","progress":1,' &&
    printf '%s\n' "$out" | grep -q '^data: {"jsonrpc":"2.0","id":4,"result":.*"stdout":"streamed\\n"' ||
    fail "a tool call's event stream: $out"
# HTTP/1.0 has no chunked body: its client gets JSON, then the close.
body='{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"command":"echo old"}}}'
printf 'POST /mcp HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s' \
    "$hostport" "$token" "$sid" ${#body} "$body" |
    python3 "$top/tests/harness/http-raw.py" "$hostport" | tr -d '\r' >"$tmp/raw"
grep -q '^Content-Type: application/json$' "$tmp/raw" &&
    grep -q '^Connection: close$' "$tmp/raw" &&
    grep -q '"stdout":"old\\n"' "$tmp/raw" ||
    fail "an HTTP/1.0 tool call: $(cat "$tmp/raw")"
ssess=$(printf '%s\n' "$out" | sed -n 's/.*"structuredContent":{"session":"\([^"]*\)".*/\1/p')
out=$(curl -s -i -X DELETE -H "Authorization: Bearer $token" \
    -H "Mcp-Session-Id: $sid" "$url" | tr -d '\r')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 200' || fail "DELETE: $out"
wait_state "$ssess" 10 stopped ||
    fail "the vigil session $ssess is $(db_state "$ssess") after DELETE"
out=$(post -H "Mcp-Session-Id: $sid" '{"jsonrpc":"2.0","id":5,"method":"ping"}')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 404' ||
    fail "a deleted session answers: $out"
echo "ok the protocol's HTTP answers; DELETE closes the session's vigil session"
server_down || fail "the server did not end cleanly"

# The SDK over HTTP: every check of t0901.
printf 'version: 1\nname: mcp\ncommand: echo from mcp\n' >"$tmp/m.yaml"
server_up 127.0.0.1:0
printf '%s\n' "$token" | grep -qx '[0-9a-f]\{64\}' ||
    fail "the generated token: '$token'"
timeout 180 node "$top/tests/harness/sdk/mcp-client.mjs" "$SDK" "$VIGIL" \
    "$tmp/m.yaml" "$url" "$token" >"$tmp/client.out" 2>&1 ||
    fail "the SDK client over HTTP: $(cat "$tmp/client.out")"
grep '^ok ' "$tmp/client.out"
tail -n 1 "$tmp/client.out" | grep -qx 'all passed' ||
    fail "the SDK client stopped early: $(tail -n 5 "$tmp/client.out")"

# The example's agent loop over HTTP (docs/mcp.md).
VIGIL_MCP_TOKEN=$token timeout 60 node "$top/examples/mcp/agent-loop.mjs" \
    "$SDK" "$url" >"$tmp/ex.out" 2>&1 ||
    fail "examples/mcp/agent-loop.mjs over HTTP: $(cat "$tmp/ex.out")"
grep -q '^ran: ls && pwd: exit 0, stdout "m.c\\n.*/work/build\\n"$' \
    "$tmp/ex.out" || fail "example: the session keeps cwd: $(cat "$tmp/ex.out")"
grep -q "^refused: rm -rf /: the gate says deny: deny: destructive" \
    "$tmp/ex.out" || fail "example: the refusal: $(cat "$tmp/ex.out")"
echo "ok examples/mcp/agent-loop.mjs over HTTP"

# Two clients at once: two commands of a second each end together.
s1=$(post "$init" | sed -n 's/^Mcp-Session-Id: //p')
s2=$(post "$init" | sed -n 's/^Mcp-Session-Id: //p')
call='{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 2; echo both"}}}'
t0=$(date +%s%N)
post -H "Mcp-Session-Id: $s1" "$call" >"$tmp/c1" &
p1=$!
post -H "Mcp-Session-Id: $s2" "$call" >"$tmp/c2" &
p2=$!
wait $p1 $p2
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q '"stdout":"both\\n"' "$tmp/c1" && grep -q '"stdout":"both\\n"' \
    "$tmp/c2" || fail "two clients: $(cat "$tmp/c1" "$tmp/c2")"
[ $ms -lt 3800 ] || fail "two clients' commands took ${ms} ms: one waited for the other"
echo "ok two clients at once (${ms} ms for two 2 s commands)"

# The Inspector's command line over HTTP.
( sdk_install "$SDK-inspector" "@modelcontextprotocol/inspector@$INSPECTOR" )
case $? in
0) ;;
77) echo "inspector skipped: npm install of @modelcontextprotocol/inspector@$INSPECTOR failed"
    INSPECTOR= ;;
*) fail "inspector install" ;;
esac
insp() {
	timeout 60 "$SDK-inspector/node_modules/.bin/mcp-inspector" --cli \
	    "$url" --transport http --header "Authorization: Bearer $token" \
	    "$@" 2>"$tmp/insp.err"
}
if [ -n "$INSPECTOR" ]; then
	out=$(insp --method tools/list) ||
	    fail "inspector tools/list: $(cat "$tmp/insp.err")"
	printf "%s\n" "$out" | grep -q '"name": "gate_check"' ||
	    fail "inspector tools/list: $out"
	echo "ok inspector tools/list over HTTP"
	out=$(insp --method tools/call --tool-name exec \
	    --tool-arg 'command=echo via-inspector') ||
	    fail "inspector tools/call: $(cat "$tmp/insp.err")"
	printf "%s\n" "$out" | grep -q '"stdout": "via-inspector\\n"' ||
	    fail "inspector tools/call: $out"
	echo "ok inspector tools/call over HTTP"
	out=$(insp --method tools/call --tool-name exec \
	    --tool-arg 'command=rm -rf /')
	printf "%s\n" "$out" | grep -q '"isError": true' &&
	    printf "%s\n" "$out" | grep -q '"denied": true' ||
	    fail "inspector denial over HTTP: $out"
	echo "ok inspector denial over HTTP"
	# Without the token the Inspector is refused.
	timeout 60 "$SDK-inspector/node_modules/.bin/mcp-inspector" --cli \
	    "$url" --transport http --method tools/list >"$tmp/insp.out" \
	    2>&1 && fail "the Inspector without a token: $(cat "$tmp/insp.out")"
	grep -q "a bearer token is required" "$tmp/insp.out" ||
	    fail "the Inspector without a token: $(cat "$tmp/insp.out")"
	echo "ok inspector without the token: refused"
fi
server_down || fail "the server did not end cleanly"
[ -z "$(pgrep -f 'sleep 30[12][0-9]')" ] || fail "commands left running"
[ -z "$(sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
    "select id from sessions where ended = 0")" ] ||
    fail "a session the server opened is left open"
echo "ok the server's end: nothing running, no session open"

# A unix socket: mode 0600, curl through it, removed at the end.
sock=$tmp/mcp.sock
server_up "unix:$sock"
url=http://localhost/mcp
[ "$(stat -c '%a %F' "$sock")" = "600 socket" ] ||
    fail "the unix socket: $(stat -c '%a %F' "$sock")"
upost() { post --unix-socket "$sock" "$@"; }
out=$(upost "$init")
usid=$(printf '%s\n' "$out" | sed -n 's/^Mcp-Session-Id: //p')
[ -n "$usid" ] || fail "initialize over the unix socket: $out"
out=$(upost -H "Mcp-Session-Id: $usid" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"echo over-unix"}}}')
printf '%s\n' "$out" | grep -q '"stdout":"over-unix\\n"' ||
    fail "exec over the unix socket: $out"
out=$(upost -H "Mcp-Session-Id: $usid" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"command":"rm -rf /"}}}')
printf '%s\n' "$out" | grep -q '"denied":true' &&
    printf '%s\n' "$out" | grep -q '"isError":true' ||
    fail "a denial over the unix socket: $out"
out=$(upost -H 'Origin: http://localhost' -H "Mcp-Session-Id: $usid" \
    '{"jsonrpc":"2.0","id":4,"method":"ping"}')
printf '%s\n' "$out" | grep -q '^HTTP/1.1 403' ||
    fail "an Origin over the unix socket: $out"
server_down || fail "the unix server did not end cleanly"
[ ! -e "$sock" ] || fail "the unix socket is left behind"
echo "ok unix socket"
echo "all passed"

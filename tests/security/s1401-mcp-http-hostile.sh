#!/bin/sh
# s1401: vigil mcp --listen under attack.  Any local user can reach a
# loopback port, and a web page can reach it through the browser (DNS
# rebinding: its own name resolving to 127.0.0.1).  Each request below
# carries a tools/call that would create a file; none may run, and no
# MCP session may start: no token, a wrong one (same length, a prefix,
# longer), the right token from a foreign Origin or with a foreign Host,
# a head over the limit, too many fields, a body over the limit (refused
# before it is read), a chunked body, two Authorization fields, a folded
# line, a NUL in the head.  The server serves its client after all of
# them.  Then the files: a second user plants a link at the unix socket
# path (and a file, and a socket of hers) in a shared directory, and a
# link, a file of hers, a readable file and a FIFO as the token file;
# the server refuses each, follows none and changes nothing there.  The
# socket it does make is 0600: the other user cannot connect.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
raw=$sec_dir/../harness/http-raw.py
srv=
server_down() {
	[ -n "$srv" ] || return 0
	kill -TERM "$srv" 2>/dev/null
	wait "$srv"
	srv=
}
trap 'server_down; sec_cleanup' EXIT
"$VIGIL" mcp --listen 127.0.0.1:0 2>"$tmp/srv.err" &
srv=$!
for i in $(seq 100); do
	grep -q 'bearer token' "$tmp/srv.err" && break
	sleep 0.1
done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/mcp.*/\1/p' "$tmp/srv.err")
token=$(sed -n 's/^vigil: mcp: bearer token: //p' "$tmp/srv.err")
[ -n "$port" ] && [ -n "$token" ] || fail "the server: $(cat "$tmp/srv.err")"
host=127.0.0.1:$port
pwn=$tmp/pwned
body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"exec\",\"arguments\":{\"command\":\"touch $pwn\"}}}"
len=$(printf '%s' "$body" | wc -c)
# req EXTRA-HEAD-LINES: a POST of body with Host, Content-Type, length
# and the extra lines (each ending in \r\n), as printf sees them.
req() {
	printf "POST /mcp HTTP/1.1\r\nHost: $host\r\nContent-Type: application/json\r\nContent-Length: $len\r\n$1\r\n%s" "$body"
}
# attack WHAT STATUS: sends stdin raw; the answer's status must be STATUS.
attack() {
	python3 "$raw" "$host" >"$tmp/out" || fail "$1: no connection"
	got=$(head -n 1 "$tmp/out" | tr -d '\r')
	expect "$got" "HTTP/1.1 $2 $(status_text "$2")" "$1"
	[ ! -e "$pwn" ] || fail "$1: the command ran"
}
status_text() {
	case $1 in
	400) echo "Bad Request" ;; 401) echo "Unauthorized" ;;
	403) echo "Forbidden" ;; 413) echo "Content Too Large" ;;
	431) echo "Request Header Fields Too Large" ;;
	501) echo "Not Implemented" ;;
	esac
}
wrong=$(printf '%s' "$token" | tr '0-9a-f' '1-9a-f0')
req '' | attack "no token" 401
grep -q '^WWW-Authenticate: Bearer' "$tmp/out" || fail "401 without WWW-Authenticate"
req "Authorization: Bearer $wrong\r\n" | attack "a wrong token" 401
req "Authorization: Bearer $(printf '%s' "$token" | cut -c1-63)\r\n" |
    attack "a prefix of the token" 401
req "Authorization: Bearer ${token}0\r\n" | attack "the token and more" 401
req "Authorization: Basic $token\r\n" | attack "another scheme" 401
req "Authorization: Bearer $token\r\nOrigin: http://evil.example\r\n" |
    attack "a foreign Origin" 403
req "Authorization: Bearer $token\r\nOrigin: http://127.0.0.1:1\r\n" |
    attack "another port's Origin" 403
req "Authorization: Bearer $token\r\nOrigin: null\r\n" |
    attack "Origin null" 403
printf "POST /mcp HTTP/1.1\r\nHost: evil.example:$port\r\nAuthorization: Bearer $token\r\nContent-Type: application/json\r\nContent-Length: $len\r\n\r\n%s" "$body" |
    attack "a rebound Host" 403
printf "POST /mcp HTTP/1.1\r\nHost: 10.0.0.1:$port\r\nAuthorization: Bearer $token\r\nContent-Type: application/json\r\nContent-Length: $len\r\n\r\n%s" "$body" |
    attack "a non-loopback Host" 403
{ printf "POST /mcp HTTP/1.1\r\nHost: $host\r\nAuthorization: Bearer $token\r\nX-Pad: "
  head -c 20000 /dev/zero | tr '\0' a
  printf "\r\n\r\n"; } | attack "a head of 20 KB" 431
{ printf "POST /mcp HTTP/1.1\r\nHost: $host\r\n"
  for i in $(seq 70); do printf "X-F$i: v\r\n"; done
  printf "\r\n"; } | attack "70 fields" 431
printf "POST /mcp HTTP/1.1\r\nHost: $host\r\nAuthorization: Bearer $token\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n%s" "$body" |
    attack "a body of 5 MB" 413
printf "POST /mcp HTTP/1.1\r\nHost: $host\r\nAuthorization: Bearer $token\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999999\r\n\r\n" |
    attack "a length past 64 bits" 413
printf "POST /mcp HTTP/1.1\r\nHost: $host\r\nAuthorization: Bearer $token\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" "$len" "$body" |
    attack "a chunked body" 501
printf "POST /mcp HTTP/1.1\r\nHost: $host\r\nContent-Type: application/json\r\nContent-Length: $len\r\nContent-Length: 2\r\n\r\n%s" "$body" |
    attack "two lengths (smuggling)" 400
req "Authorization: Bearer $wrong\r\nAuthorization: Bearer $token\r\n" |
    attack "two Authorization fields" 400
req "Authorization: Bearer $wrong\r\n $token\r\n" | attack "a folded line" 400
req "Authorization: Bearer $token\r\nX: a\0b\r\n" | attack "a NUL in the head" 400
grep -q 'MCP session .* started' "$tmp/srv.err" &&
    fail "a refused request started an MCP session: $(cat "$tmp/srv.err")"
echo "ok: every refused request refused, nothing ran, no session started"
# The server still serves its client.
out=$(curl -s -i -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}' \
    "http://$host/mcp" | tr -d '\r')
printf '%s\n' "$out" | grep -q '^Mcp-Session-Id: [0-9a-f]\{32\}$' ||
    fail "the server after the attacks: $out"
server_down
echo "ok: the server serves its client after the attacks"

# The unix socket's path, in a directory both users can write.
shared=$tmp/shared
mkdir "$shared"
chmod 1777 "$shared"
victim=$tmp/victim
printf 'root data\n' >"$victim"
as_mallory ln -s "$victim" "$shared/mcp.sock"
as_mallory ln -s "$tmp/absent" "$shared/dangling.sock"
as_mallory sh -c "echo mallory >$shared/file.sock"
# refused WHAT ADDR REASON [ARGS]: vigil mcp exits 2 saying REASON.
refused() {
	_what=$1 _addr=$2 _why=$3
	shift 3
	timeout 10 "$VIGIL" mcp --listen "$_addr" "$@" </dev/null \
	    >/dev/null 2>"$tmp/err"
	_st=$?
	[ $_st -eq 2 ] || fail "$_what: exit $_st: $(cat "$tmp/err")"
	grep -q "$_why" "$tmp/err" || fail "$_what: $(cat "$tmp/err")"
}
refused "a link at the socket path" "unix:$shared/mcp.sock" \
    "exists (a symbolic link): refused"
refused "a dangling link at the socket path" "unix:$shared/dangling.sock" \
    "exists (a symbolic link): refused"
refused "a file at the socket path" "unix:$shared/file.sock" \
    "exists (not a socket): refused"
expect "$(cat "$victim")" "root data" "the link's target"
[ ! -e "$tmp/absent" ] || fail "the dangling link's target was made"
expect "$(readlink "$shared/mcp.sock")" "$victim" "the planted link"
expect "$(cat "$shared/file.sock")" mallory "the planted file"
# A socket of hers, a server of hers listening on it: not taken over,
# not connected to.
as_mallory sh -c "echo \$\$ >$MALLORY_DIR/pid; exec timeout 60 $VG mcp --listen unix:$shared/her.sock" \
    2>/dev/null &
for i in $(seq 100); do [ -S "$shared/her.sock" ] && break; sleep 0.1; done
[ -S "$shared/her.sock" ] || fail "the other user's server did not start"
refused "another user's socket" "unix:$shared/her.sock" \
    "another user's socket"
kill -TERM "$(cat "$MALLORY_DIR/pid")"
wait
echo "ok: planted links, files and sockets at the socket path are refused"

# The socket made is 0600: the other user cannot connect.
"$VIGIL" mcp --listen "unix:$shared/mine.sock" 2>"$tmp/srv.err" &
srv=$!
for i in $(seq 100); do [ -S "$shared/mine.sock" ] && break; sleep 0.1; done
expect "$(stat -c '%a %U' "$shared/mine.sock")" "600 root" "the socket made"
as_mallory curl -s --max-time 5 --unix-socket "$shared/mine.sock" \
    http://localhost/mcp >"$tmp/out" 2>&1
[ $? -eq 7 ] || fail "the other user connected: $(cat "$tmp/out")"
server_down
[ ! -e "$shared/mine.sock" ] || fail "the socket is left behind"
echo "ok: the socket is its owner's only"

# The token file.
printf 'a-token-of-roots-0123456789\n' >"$tmp/root-token"
chmod 600 "$tmp/root-token"
as_mallory ln -s "$tmp/root-token" "$shared/token-link"
refused "a link as the token file" 127.0.0.1:0 \
    "token file '$shared/token-link' is a symbolic link: refused" \
    --token-file "$shared/token-link"
as_mallory sh -c "umask 077; echo mallorys-own-token-0123456789 >$shared/token-hers"
refused "another user's token file" 127.0.0.1:0 "token file '$shared/token-hers' is owned by uid" \
    --token-file "$shared/token-hers"
printf 'a-readable-token-0123456789\n' >"$tmp/token-644"
chmod 644 "$tmp/token-644"
refused "a token file others can read" 127.0.0.1:0 "token file '$tmp/token-644' has mode 0644" \
    --token-file "$tmp/token-644"
as_mallory mkfifo "$shared/token-fifo"
refused "a FIFO as the token file" 127.0.0.1:0 \
    "token file '$shared/token-fifo' is not a regular file" \
    --token-file "$shared/token-fifo"
echo "ok: the token file: links, others' files, readable files, FIFOs refused"
echo "s1401: ok"

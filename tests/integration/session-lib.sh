# session-lib.sh - the session checks every backend passes (sourced).
#
# The caller sets VIGIL, VIGIL_HOME, tmp, and defines:
#   sess_start [ARGS...]   vigil session start with the backend's options
#   sb_gone ID             0 when session ID's sandbox no longer exists
# then calls session_suite.  Each check fails the test with a message.
# SESS_MERGED=1: the provider reports stdout and stderr as one stream, and
# only once the command has ended (a tool gateway): the streaming check
# then checks that the whole output arrives at the end instead.

fail() { echo "FAIL: $*"; exit 1; }

# Stops every session still open (for the caller's EXIT trap).
sessions_down() {
	for _s in $(sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select id from sessions where ended = 0" 2>/dev/null); do
		"$VIGIL" session stop "$_s" >/dev/null 2>&1
	done
}

# Milliseconds since the epoch.
now_ms() { date +%s%3N; }

# The state of session $1 as the database records it (no vigil call).
db_state() {
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select state from sessions where id = '$1'" 2>/dev/null
}

# Waits up to $2 seconds for session $1 to reach state $3.
wait_state() {
	_n=0
	while [ "$(db_state "$1")" != "$3" ]; do
		_n=$((_n + 1))
		[ $_n -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# The pid of the process an owner label "host:pid:start" names.
owner_pid() {
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select owner from sessions where id = '$1'" | cut -d: -f2
}

x() { "$VIGIL" exec --session "$@" </dev/null; }

# sb_gone_soon ID: the backend's sb_gone within 5 s (the keeper records
# the session's end, then removes the sandbox and exits).
sb_gone_soon() {
	_n=0
	until sb_gone "$1"; do
		[ $_n -ge 50 ] && return 1
		sleep 0.1; _n=$((_n + 1))
	done
}

check_persistence() {
	id=$1
	x "$id" -- 'mkdir -p sub/dir && cd sub/dir && export AGENT_VAR="a b'\''c" && touch here' \
	    2>err.txt || fail "setup: $(cat err.txt)"
	out=$(x "$id" -- 'pwd; printf "%s\n" "$AGENT_VAR"; ls') ||
	    fail "second command"
	printf "%s\n" "$out" | head -n 1 | grep -q '/sub/dir$' || fail "cwd kept: $out"
	[ "$(printf "%s\n" "$out" | sed -n 2p)" = "a b'c" ] || fail "export kept: $out"
	[ "$(printf "%s\n" "$out" | sed -n 3p)" = here ] || fail "files kept: $out"
	x "$id" -- 'exit 7'; [ $? -eq 7 ] || fail "exit code"
	x "$id" -- 'cd ..; false'; [ $? -eq 1 ] || fail "false"
	out=$(x "$id" -- pwd)
	printf "%s\n" "$out" | grep -q '/sub$' || fail "cd before a failure kept: $out"
	# argv form: words quoted for the session's shell.
	out=$(x "$id" -- printf '%s|' 'a b' c)
	[ "$out" = "a b|c|" ] || fail "argv form: $out"
}

check_streaming() {
	id=$1
	if [ "${SESS_MERGED:-0}" = 1 ]; then
		out=$(x "$id" -- 'echo first; sleep 1; echo second')
		[ "$out" = "first
second" ] || fail "output at the end: $out"
		return 0
	fi
	: >stream.txt
	t0=$(now_ms)
	x "$id" -- 'echo first; sleep 3; echo second' >stream.txt 2>&1 &
	p=$!
	while ! grep -q first stream.txt; do
		[ $(( $(now_ms) - t0 )) -gt 2500 ] &&
		    fail "first line not there after 2.5s: $(cat stream.txt)"
		sleep 0.05
	done
	kill -0 $p 2>/dev/null || fail "the command ended before its first line came"
	grep -q second stream.txt && fail "second line too early"
	wait $p || fail "streamed command"
	grep -q second stream.txt || fail "second line"
}

check_stdin() {
	id=$1
	out=$(printf 'one\ntwo\n' | "$VIGIL" exec --session "$id" --stdin -- 'wc -l; cat') ||
	    fail "stdin command"
	[ "$(printf "%s\n" "$out" | head -n 1 | tr -d ' ')" = 2 ] || fail "stdin: $out"
	out=$(x "$id" -- 'cat; echo done')
	[ "$out" = done ] || fail "no --stdin reads nothing: $out"
}

check_timeout() {
	id=$1
	t0=$(now_ms)
	x "$id" --timeout 1 -- 'export AFTER=1; sleep 6017 & sleep 6018; echo no' \
	    >out.txt 2>err.txt
	rc=$?
	[ $rc -eq 124 ] || fail "timeout rc $rc: $(cat err.txt)"
	[ $(( $(now_ms) - t0 )) -lt 20000 ] || fail "timeout took too long"
	grep -q 'timed out' err.txt || fail "timeout message: $(cat err.txt)"
	out=$(x "$id" -- 'echo alive ${AFTER:-unset}') || fail "session after timeout"
	[ "$out" = "alive unset" ] || fail "after timeout: $out"
	# The tree is gone: no sleep 6017/6018 left in the sandbox (within
	# 5 s: a provider may end an exec's processes after it answers).
	_n=0
	while :; do
		out=$(x "$id" -- 'for p in /proc/[0-9]*; do tr "\0" " " 2>/dev/null <$p/cmdline; echo; done | grep -c "^sleep 601[78]" || true')
		[ "$out" = 0 ] || [ $_n -ge 10 ] && break
		sleep 0.5; _n=$((_n + 1))
	done
	[ "$out" = 0 ] || fail "timed-out tree still runs ($out processes)"
}

check_json() {
	id=$1
	out=$(x "$id" --json --output-limit 100 -- 'seq 1 1000; echo oops >&2; exit 4')
	rc=$?
	[ $rc -eq 4 ] || fail "json rc $rc"
	printf "%s\n" "$out" | SESS_MERGED=${SESS_MERGED:-0} python3 -c '
import json, os, sys
merged = os.environ["SESS_MERGED"] == "1"
o = json.load(sys.stdin)
tail = "1000\noops\n" if merged else "1000\n"
assert o["exit_code"] == 4, o
assert o["truncated"] is True, o
assert o["stdout"].startswith("1\n2\n"), o["stdout"]
assert o["stdout"].endswith(tail), o["stdout"]
assert "bytes left out" in o["stdout"], o["stdout"]
assert o["stderr"] == ("" if merged else "oops\n"), o
assert o["duration"] >= 0
whole = open(os.path.join(o["output_dir"], "stdout")).read()
assert whole == "".join("%d\n" % i for i in range(1, 1001)) + \
    ("oops\n" if merged else "")
' || fail "json object: $out"
}

check_background() {
	id=$1
	j=$(x "$id" --background -- 'echo started; sleep 1; echo finished; exit 5') ||
	    fail "background start"
	case $j in *[!0-9]*|"") fail "job id: $j" ;; esac
	"$VIGIL" session jobs "$id" | grep -q "^ *$j bg  *running" ||
	    fail "jobs: $("$VIGIL" session jobs "$id")"
	"$VIGIL" session output "$id" "$j" --wait >bg.txt; rc=$?
	[ $rc -eq 5 ] || fail "output --wait rc $rc"
	[ "$(cat bg.txt)" = "started
finished" ] || fail "bg output: $(cat bg.txt)"
	"$VIGIL" session jobs "$id" --json | python3 -c "
import json, sys
j = [x for x in json.load(sys.stdin) if x['job'] == $j][0]
assert j['state'] == 'exited' and j['exit_code'] == 5, j
" || fail "jobs --json"
	# A server-like job, read while it runs, then killed.
	j=$(x "$id" --background -- 'i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done')
	# Read while it runs: poll (a loaded host or a slow transport may take
	# a while to start it), but the job must still be running when read.
	if [ "${SESS_MERGED:-0}" != 1 ]; then
		k=0
		until "$VIGIL" session output "$id" "$j" | grep -q 'tick 2'; do
			k=$((k+1)); [ $k -lt 100 ] || break; sleep 0.2
		done
		[ $k -lt 100 ] || fail "output while running"
		"$VIGIL" session jobs "$id" | grep -q "^ *$j bg  *running" ||
		    fail "not running when read: $("$VIGIL" session jobs "$id")"
	fi
	"$VIGIL" session kill "$id" "$j" >kill.txt || fail "kill"
	grep -q "job $j killed" kill.txt || fail "kill: $(cat kill.txt)"
	n1=$("$VIGIL" session output "$id" "$j" | wc -l); sleep 0.6
	n2=$("$VIGIL" session output "$id" "$j" | wc -l)
	[ "$n1" = "$n2" ] || fail "killed job still writes"
	"$VIGIL" session output "$id" 999 2>/dev/null; [ $? -eq 2 ] || fail "unknown job"
	# --follow prints as it comes, then the exit code.
	j=$(x "$id" --background -- 'echo a; sleep 0.5; echo b; exit 2')
	out=$("$VIGIL" session output "$id" "$j" --follow); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "a
b" ] || fail "follow: $rc $out"
}

check_denied() {
	id=$1
	x "$id" -- 'export DENIED_SET=1; cd /' >/dev/null
	before=$(x "$id" -- 'pwd; echo ${DENIED_SET:-}')
	x "$id" -- 'cd /tmp; export DENIED_SET=2; rm -rf /' 2>err.txt; rc=$?
	[ $rc -eq 3 ] || fail "denied rc $rc"
	grep -q "floor:delete-root" err.txt || fail "denied reason: $(cat err.txt)"
	after=$(x "$id" -- 'pwd; echo ${DENIED_SET:-}')
	[ "$before" = "$after" ] || fail "denied command changed the session: $before / $after"
	out=$(x "$id" --json -- 'rm -rf /'); [ $? -eq 3 ] || fail "json denied rc"
	printf "%s\n" "$out" | grep -q '"denied":true' || fail "json denied: $out"
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select count(*) from audit where run_id = '$id' and verdict = 'deny'" |
	    grep -qx 2 || fail "denials audited under the session id"
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select count(*) from audit where run_id = '$id' and verdict = 'allow'" |
	    grep -qvx 0 || fail "allowed commands audited under the session id"
}

check_stop() {
	id=$1
	"$VIGIL" session stop "$id" >stop.txt || fail "stop: $(cat stop.txt)"
	grep -q "stopped $id" stop.txt || fail "stop says: $(cat stop.txt)"
	[ "$(db_state "$id")" = stopped ] || fail "state after stop: $(db_state "$id")"
	sb_gone_soon "$id" || fail "sandbox of $id left after stop"
	x "$id" -- true 2>err.txt; [ $? -eq 2 ] || fail "exec in a stopped session"
	grep -q "is stopped" err.txt || fail "stopped message: $(cat err.txt)"
	"$VIGIL" session stop "$id" | grep -q already || fail "second stop"
}

check_idle() {
	id=$(sess_start --idle-timeout 2s --name idle-one) || fail "idle start"
	x idle-one -- true || fail "exec by name"
	wait_state "$id" 15 expired || fail "not expired by its keeper: $(db_state "$id")"
	sb_gone_soon "$id" || fail "sandbox of $id left after idle expiry"
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" "select reason from sessions where id = '$id'" |
	    grep -q idle || fail "expiry reason"
	x "$id" -- true 2>/dev/null; [ $? -eq 2 ] || fail "exec in an expired session"
	# A running command is not idleness.
	id=$(sess_start --idle-timeout 1s) || fail "busy start"
	x "$id" -- 'sleep 3; echo ok' >busy.txt || fail "busy command cut: $(cat busy.txt)"
	[ "$(cat busy.txt)" = ok ] || fail "busy output"
	"$VIGIL" session stop "$id" >/dev/null
	# max age.
	id=$(sess_start --max-age 2s) || fail "max-age start"
	wait_state "$id" 15 expired || fail "max-age not enforced"
	sb_gone_soon "$id" || fail "sandbox left after max age"
}

check_gc_after_kill() {
	id=$(sess_start) || fail "gc start"
	x "$id" -- true || fail "gc exec"
	j=$(x "$id" --background -- 'sleep 3017')
	x "$id" -- 'sleep 3018' >/dev/null 2>&1 &
	p=$!
	sleep 1
	keeper=$(owner_pid "$id")
	kill -9 "$keeper" $p
	# The job's record: "runner PID START STARTED" among its lines.
	runner=$(awk '$1 == "runner" { print $2 }' \
	    "$VIGIL_HOME/sessions/$id/cmds/$j/job")
	[ -n "$runner" ] || fail "no runner in the record of job $j"
	kill -9 "$runner"
	wait $p 2>/dev/null
	sleep 0.5
	"$VIGIL" gc --no-reap >gc.txt 2>&1 || fail "gc: $(cat gc.txt)"
	grep -q "closed session $id (its keeper is gone)" gc.txt || fail "gc said: $(cat gc.txt)"
	sb_gone_soon "$id" || fail "sandbox of $id left after gc"
	[ "$(db_state "$id")" = stopped ] || fail "gc state"
	# A start killed half way is found too: a record left in starting.
	"$VIGIL" gc --no-reap --older-than 0 >gc2.txt 2>&1 || fail "gc 0: $(cat gc2.txt)"
	[ -d "$VIGIL_HOME/sessions/$id" ] && fail "ended session dir kept by gc --older-than 0"
	true
}

check_two_agents() {
	a=$(sess_start --name agent-a) || fail "agent a"
	b=$(sess_start --name agent-b) || fail "agent b"
	agent() {
		x "$1" -- "mkdir -p $1 && cd $1 && export WHO=$1 N=0" || exit 1
		i=0
		while [ $i -lt 8 ]; do
			x "$1" -- 'N=$((N+1)); export N; echo "$WHO $N $(basename $(pwd))"' \
			    >>"agent-$1.txt" || exit 1
			i=$((i + 1))
		done
	}
	agent agent-a & pa=$!
	agent agent-b & pb=$!
	wait $pa || fail "agent a failed"
	wait $pb || fail "agent b failed"
	[ "$(tail -n 1 agent-agent-a.txt)" = "agent-a 8 agent-a" ] || fail "a: $(cat agent-agent-a.txt)"
	[ "$(tail -n 1 agent-agent-b.txt)" = "agent-b 8 agent-b" ] || fail "b: $(cat agent-agent-b.txt)"
	"$VIGIL" session list --json | python3 -c '
import json, sys
names = {s["name"]: s for s in json.load(sys.stdin)}
assert names["agent-a"]["state"] == "active" and names["agent-a"]["jobs"] == 9, names["agent-a"]
' || fail "list --json"
	"$VIGIL" session stop agent-a >/dev/null && "$VIGIL" session stop agent-b >/dev/null ||
	    fail "stop agents"
	sb_gone_soon "$a" && sb_gone_soon "$b" || fail "agents' sandboxes left"
}

check_errors() {
	sess_start --idle-timeout soon 2>err.txt; [ $? -eq 2 ] || fail "bad idle"
	grep -q "duration" err.txt || fail "idle message: $(cat err.txt)"
	sess_start --mode sometimes 2>err.txt; [ $? -eq 2 ] || fail "bad mode"
	printf 'command: echo hi\n' >withcmd.yaml
	"$VIGIL" session start -f withcmd.yaml 2>err.txt; [ $? -eq 2 ] || fail "manifest with a command"
	grep -q "withcmd.yaml:1:1: error: a session has no 'command'" err.txt ||
	    fail "command message: $(cat err.txt)"
	"$VIGIL" exec --session nope -- true 2>err.txt; [ $? -eq 2 ] || fail "unknown session"
	grep -q "no session 'nope'" err.txt || fail "unknown session message"
	"$VIGIL" exec --json -- true 2>/dev/null; [ $? -eq 2 ] || fail "--json without --session"
	"$VIGIL" session jobs 2>/dev/null; [ $? -eq 2 ] || fail "jobs without id"
	"$VIGIL" session frob 2>/dev/null; [ $? -eq 2 ] || fail "unknown verb"
	"$VIGIL" session list --wait 2>/dev/null; [ $? -eq 2 ] || fail "option of another verb"
}

session_suite() {
	check_errors
	id=$(sess_start) || fail "start"
	case $id in s-*) ;; *) fail "session id: $id" ;; esac
	[ "$(db_state "$id")" = active ] || fail "state after start"
	check_persistence "$id"
	check_streaming "$id"
	check_stdin "$id"
	check_json "$id"
	check_timeout "$id"
	check_denied "$id"
	check_background "$id"
	check_stop "$id"
	check_two_agents
	check_idle
	check_gc_after_kill
}

# cloud-lib.sh - shared by the t08xx-cloud tests (sourced after setting
# PROVIDER to daytona or vercel): starts the provider's fake API
# (tests/harness/fake-PROVIDER.py) on a private loopback port in a temp
# dir removed on exit, and runs one suite of checks against it through
# `vigil run`: exit codes, both streams, environment, argv, big output,
# missing token, refused token, 5xx retries, timeout, cancel, reap,
# doctor and validate.
set -u
. "$(dirname "$0")/engine-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
FAKE_PID=
trap 'stop_fake; rm -rf "$W"' EXIT
trap 'exit 1' INT TERM
TOKEN=tok-$$-secret

case $PROVIDER in
daytona)
	TOKVAR=DAYTONA_API_KEY
	EPVAR=DAYTONA_API_URL
	fake_args() { echo --token "$TOKEN"; }
	api_prefix=/api
	;;
vercel)
	TOKVAR=VERCEL_TOKEN
	EPVAR=VIGIL_VERCEL_API_URL
	VERCEL_TEAM_ID=team_it VERCEL_PROJECT_ID=prj_it
	export VERCEL_TEAM_ID VERCEL_PROJECT_ID
	fake_args() {
		echo --token "$TOKEN" --team team_it --project prj_it
	}
	api_prefix=/api
	;;
*)	echo "PROVIDER must be daytona or vercel" >&2; exit 1 ;;
esac
eval "$TOKVAR=\$TOKEN; export $TOKVAR"

# start_fake [ARGS...]: a fresh fake; sets FD (its dir) and EP.
n_fake=0
start_fake() {
	stop_fake
	n_fake=$((n_fake + 1))
	FD=$W/fake$n_fake
	mkdir -p "$FD"
	# shellcheck disable=SC2046
	python3 "$top/tests/harness/fake-$PROVIDER.py" --dir "$FD" \
		$(fake_args) "$@" 2>"$FD/stderr" &
	FAKE_PID=$!
	i=0
	until [ -s "$FD/port" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "fake $PROVIDER did not start: \
$(cat "$FD/stderr")"
		sleep 0.1
	done
	EP=http://127.0.0.1:$(cat "$FD/port")$api_prefix
}
stop_fake() {
	[ -n "$FAKE_PID" ] || return 0
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=
}

# boxes: "ID OWNER RUN" of every sandbox vigil labelled, from the API.
boxes() {
	case $PROVIDER in
	daytona) curl -s -H "Authorization: Bearer $TOKEN" \
		"$EP/sandbox?labels=%7B%22vigil%22%3A%221%22%7D" |
		python3 -c 'import json,sys
for b in json.load(sys.stdin)["items"]:
    l = b["labels"]; print(b["id"], l["vigil-owner"], l["vigil-run"])' ;;
	vercel) curl -s -H "Authorization: Bearer $TOKEN" \
		"$EP/v2/sandboxes?teamId=team_it&project=prj_it&tags=vigil:1" |
		python3 -c 'import json,sys
for b in json.load(sys.stdin)["sandboxes"]:
    t = b["tags"]; print(b["name"], t["vigil-owner"], t["vigil-run"])' ;;
	esac
}

# mf NAME COMMAND-YAML [MORE-YAML [SECTION-YAML [ENDPOINT]]]: writes
# $W/NAME.yaml.
mf() {
	cat >"$W/$1.yaml" <<EOF
version: 1
name: $1
backend: $PROVIDER
command: $2
${3:-}
$PROVIDER:
  endpoint: ${5:-$EP}
${4:-}
EOF
}

# run_task NAME: runs $W/NAME.yaml; sets RC, ST (state exit signal),
# REASON, OUT, ERR (the task's files) and RUN.
run_task() {
	"$VIGIL" run -q --json "$W/$1.yaml" >"$W/$1.json" 2>"$W/$1.err"
	RC=$?
	RUN=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' \
		<"$W/$1.json") || fail "$1: no status: $(cat "$W/$1.err")"
	task_fields
}
task_fields() {
	"$VIGIL" status "$RUN" --json >"$W/st.json"
	ST=$(python3 -c 'import json,sys; t=json.load(sys.stdin)["tasks"][0]
print(t["state"], t["exit_code"], t["signal"])' <"$W/st.json")
	REASON=$(python3 -c 'import json,sys
print(json.load(sys.stdin)["tasks"][0]["reason"])' <"$W/st.json")
	OUT=$(cat "$VIGIL_HOME/runs/$RUN/tasks/0/stdout")
	ERR=$(cat "$VIGIL_HOME/runs/$RUN/tasks/0/stderr")
}

# wait_for FILE TEXT: until FILE holds TEXT (10 s).
wait_for() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || return 1; sleep 0.1
	done
}
newest_run() {
	"$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'
}
# run_started NAME: runs $W/NAME.yaml in the background until its task
# printed "started"; sets vpid (that vigil) and RUN (its new run).
run_started() {
	last_run=${RUN:-}
	"$VIGIL" run -q "$W/$1.yaml" >/dev/null 2>&1 &
	vpid=$!
	i=0
	until RUN=$(newest_run 2>/dev/null) && [ "$RUN" != "$last_run" ] &&
	    wait_for "$VIGIL_HOME/runs/$RUN/tasks/0/stdout" started; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "$1 never started"
		sleep 0.1
	done
}

cloud_suite() {
	start_fake
	P=$PROVIDER
	mkdir -p "$W/wd"

	# 1. Both streams, environment, working directory.
	mf ok "'echo \"o1 \$K\"; echo e1 >&2; echo \"\$VIGIL_RUN_ID \
\$VIGIL_TASK_INDEX \$VIGIL_ATTEMPT\"; echo \"leak=\${HOSTONLY:-none}\"; \
echo \"path=\$PATH\"; pwd; echo e2 >&2'" "env:
  K: 'v  w'
workdir: $W/wd"
	oldpath=$PATH
	HOSTONLY=secret PATH=$PATH:/opt/host-only
	export HOSTONLY PATH
	run_task ok
	unset HOSTONLY
	PATH=$oldpath
	expect_eq "exit status" 0 "$RC"
	expect_eq "state" "SUCCEEDED 0 None" "$ST"
	expect_eq "stdout" "o1 v  w
$RUN 0 1
leak=none
path=/usr/local/bin:/usr/bin:/bin
$W/wd" "$OUT"
	expect_eq "stderr" "e1
e2" "$ERR"
	expect_eq "no sandbox left" "" "$(boxes)"

	# 2. Exit codes.
	mf fail "'echo bye; exit 7'"
	run_task fail
	expect_eq "exit status of a failed task" 1 "$RC"
	expect_eq "failed state" "FAILED 7 None" "$ST"
	expect_eq "failed reason" "exit code 7" "$REASON"
	expect_eq "failed stdout" "bye" "$OUT"

	# 3. An argv command runs without a shell.
	mf argv '["/bin/echo", "a  b", "$HOME", ";"]'
	run_task argv
	expect_eq "argv state" "SUCCEEDED 0 None" "$ST"
	expect_eq "argv verbatim" 'a  b $HOME ;' "$OUT"

	# 4. Output larger than any buffer, both streams.
	mf big "'i=0; while [ \$i -lt 20000 ]; do echo \
xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=\$((i+1)); done; \
head -c 100000 /dev/zero | tr \"\\\\0\" y >&2'"
	run_task big
	expect_eq "big state" "SUCCEEDED 0 None" "$ST"
	expect_eq "big stdout bytes" "2240000 0" \
	    "$(wc -c <"$VIGIL_HOME/runs/$RUN/tasks/0/stdout") \
$(tr -d 'x\n' <"$VIGIL_HOME/runs/$RUN/tasks/0/stdout" | wc -c)"
	# Daytona's log ends every line, the last one too.
	expect_eq "big stderr" "100000" \
	    "$(tr -d '\n' <"$VIGIL_HOME/runs/$RUN/tasks/0/stderr" | wc -c)"

	# 5. No token: a valid manifest this host cannot run: refused
	# before the run is created (exit 6), nothing recorded.
	mf notok "'true'"
	before=$("$VIGIL" status --json | python3 -c \
	    'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
	env -u "$TOKVAR" "$VIGIL" run -q --json "$W/notok.yaml" >"$W/o" 2>&1
	expect_eq "no token exit" 6 "$?"
	grep -q "$P: no API token: environment variable $TOKVAR is not set \
($P.token_env names the variable to read)" "$W/o" ||
	    fail "no token message: $(cat "$W/o")"
	env -u "$TOKVAR" "$VIGIL" submit "$W/notok.yaml" >"$W/o" 2>&1
	expect_eq "no token submit exit" 6 "$?"
	env -u "$TOKVAR" "$VIGIL" validate "$W/notok.yaml" >"$W/o" 2>&1
	expect_eq "no token validate exit" 6 "$?"
	grep -q "this host cannot run it:" "$W/o" ||
	    fail "no token validate section: $(cat "$W/o")"
	expect_eq "no run recorded" "$before" "$("$VIGIL" status --json |
	    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')"
	mf tokenv "'true'" "" "  token_env: VIGIL_IT_NO_SUCH_TOKEN"
	"$VIGIL" validate "$W/tokenv.yaml" >"$W/o" 2>&1
	grep -q "$P: no API token: environment variable \
VIGIL_IT_NO_SUCH_TOKEN is not set ($P.token_env names the variable to read)" \
	    "$W/o" || fail "token_env message: $(cat "$W/o")"

	# 6. A token the API refuses; the token never shows.
	mf badtok "'true'"
	eval "$TOKVAR=wrong-\$TOKEN"
	run_task badtok
	eval "$TOKVAR=\$TOKEN"
	case $P in
	daytona) want="daytona: creating the sandbox: Invalid credentials \
(HTTP 401; check the token in DAYTONA_API_KEY)" ;;
	vercel) want="vercel: creating the sandbox: Not authorized (HTTP 403; \
check the token in VERCEL_TOKEN)" ;;
	esac
	expect_eq "refused token" "BACKEND_ERROR None None" "$ST"
	expect_eq "refused token reason" "$want" "$REASON"
	case "$(cat "$W"/*.json "$VIGIL_HOME"/runs/*/tasks/*/*)" in
	*"$TOKEN"*) fail "the token appears in vigil's records" ;;
	esac

	# 7. 503 twice, then success: retried.
	start_fake --fail-create 2
	mf retry "'echo third time'"
	run_task retry
	expect_eq "retried state" "SUCCEEDED 0 None" "$ST"
	expect_eq "retried stdout" "third time" "$OUT"
	expect_eq "create tries" "503 503 200" "$(grep -E \
	    '^POST [^ ]*(/api/sandbox|/v3/sandboxes[^/ ]*) ' "$FD/requests" |
	    awk '{print $3}' | tr '\n' ' ' | sed 's/ $//')"

	# 8. Timeout: the command is stopped, the sandbox deleted.
	mf slow "'echo started; sleep 30; echo never'" "timeout: 2s
kill_grace: 1s"
	t0=$(date +%s)
	run_task slow
	t1=$(date +%s)
	expect_eq "timeout exit status" 1 "$RC"
	expect_eq "timeout state" TIMEOUT "${ST%% *}"
	expect_eq "timeout stdout" "started" "$OUT"
	[ $((t1 - t0)) -lt 15 ] || fail "timeout took $((t1 - t0)) s"
	expect_eq "no sandbox after timeout" "" "$(boxes)"

	# 9. Ctrl-C: CANCELLED, sandbox deleted.
	mf long "'echo started; sleep 60'"
	run_started long
	kill -INT $vpid
	wait $vpid
	expect_eq "cancel exit status" 5 "$?"
	task_fields
	expect_eq "cancel state" CANCELLED "${ST%% *}"
	expect_eq "no sandbox after cancel" "" "$(boxes)"

	# 10. Reap: a sandbox whose monitor was killed goes, a live one stays.
	"$VIGIL" run -q "$W/long.yaml" >/dev/null 2>&1 &
	dead_vigil=$!
	i=0
	until [ "$(boxes | wc -l)" -eq 1 ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "no sandbox to reap"
		sleep 0.1
	done
	set -- $(boxes)
	dead_box=$1 dead_run=$3
	monitor=$(echo "$2" | cut -d: -f2)
	kill -9 $dead_vigil "$monitor"
	wait $dead_vigil 2>/dev/null
	"$VIGIL" run -q "$W/long.yaml" >/dev/null 2>&1 &
	live_vigil=$!
	i=0
	until [ "$(boxes | wc -l)" -eq 2 ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "second sandbox missing"
		sleep 0.1
	done
	env "$EPVAR=$EP" "$VIGIL" gc --older-than 1000d >"$W/gc.out" \
	    2>"$W/gc.err"
	grep -qx "$P: removed sandbox $dead_box (run $dead_run, task 0)" \
	    "$W/gc.out" || fail "gc did not reap: $(cat "$W/gc.out" \
"$W/gc.err")"
	expect_eq "live sandbox kept" 1 "$(boxes | wc -l)"
	[ "$(boxes | cut -d' ' -f1)" != "$dead_box" ] || fail "wrong one kept"
	kill -INT $live_vigil
	wait $live_vigil
	expect_eq "nothing left" "" "$(boxes)"

	# 11. doctor and validate.
	env "$EPVAR=$EP" "$VIGIL" doctor -b "$P" >"$W/doc"
	grep -qx "$P: ok ($EP, token from $TOKVAR)" "$W/doc" ||
	    fail "doctor: $(cat "$W/doc")"
	env -u "$TOKVAR" "$VIGIL" doctor -b "$P" >"$W/doc"
	grep -qx "$P: missing ($P: no API token: environment variable \
$TOKVAR is not set ($P.token_env names the variable to read))" "$W/doc" ||
	    fail "doctor without token: $(cat "$W/doc")"
	mf badconf "'true'" "workdir: rel" "  token_env: 1BAD" ftp://x
	"$VIGIL" validate "$W/badconf.yaml" 2>"$W/v" && fail "validate passed"
	expect_eq "validate" "$W/badconf.yaml:5:1: error: workdir: 'rel' must \
be an absolute path inside the sandbox
    5 | workdir: rel
      | ^
$W/badconf.yaml:7:3: error: $P.endpoint: 'ftp://x' is not an http:// or \
https:// URL
    7 |   endpoint: ftp://x
      |   ^
$W/badconf.yaml:8:3: error: $P.token_env: '1BAD' is not an environment \
variable name (letters, digits and '_', not starting with a digit)
    8 |   token_env: 1BAD
      |   ^" \
	    "$(cat "$W/v")"
	stop_fake
	pass
}

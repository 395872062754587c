# shellcheck shell=sh
# status-lib.sh - sourced by the scheduler tests (slurm-lib.sh,
# gridengine-lib.sh): what `vigil status --json` says of runs, and waits
# on it, and the assertions.  The caller sets VIGIL and VIGIL_HOME.
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; }
pass() { echo "ok"; exit 0; }
# Field of the JSON status of run $1: python expression on d.
jq_run() { "$VIGIL" status "$1" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }
last_run() { "$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'; }
states() { jq_run "$1" '" ".join(t["state"] for t in d["tasks"])'; }
# wait_count RUN STATE N SECONDS: until N tasks of RUN are in STATE.
wait_count() {
	i=0
	while [ $i -lt $(($4 * 5)) ]; do
		[ "$(jq_run "$1" "d['counts'].get('$2', 0)" 2>/dev/null)" \
		    -ge "$3" ] 2>/dev/null && return 0
		sleep 0.2; i=$((i + 1))
	done
	fail "$3 task(s) of $1 never reached $2: $("$VIGIL" status "$1")"
}
# wait_run: prints the id of the newest run once one exists.
wait_run() {
	i=0
	while [ $i -lt 100 ]; do
		id=$(last_run 2>/dev/null) && [ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.1; i=$((i + 1))
	done
	fail "no run appeared"
}

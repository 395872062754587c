# resume-lib.sh - kill -9 of vigil mid-run, then vigil resume, for the
# remote backends (sourced after docker-lib.sh, ssh-lib.sh or
# cloud-lib.sh, which set VIGIL, VIGIL_HOME, tmp, check and fail).
#
#   resume_case NAME MANIFEST NTASKS MODE
#       runs MANIFEST (whose tasks append one line to the counter file
#       "$tmp/count/NAME.<index>" or, with COUNT_IN_TASK_DIR=1, to
#       "$VIGIL_TASK_DIR/count", print "begin", sleep, print "end"),
#       waits until every task has started, then SIGKILLs vigil (MODE
#       vigil) or vigil and every monitor it recorded (MODE all: the
#       backend's reattach must find the attempt where it runs), checks
#       the run is INTERRUPTED, runs `vigil resume` and checks: every task
#       SUCCEEDED, each ran once (one counter line), its stdout is
#       "begin\nend" (nothing lost, nothing twice), and the attempt count.
#   RL_RUNS     how many times each task runs in MODE all (default 1;
#               2 where the backend kills what it cannot follow)
#   RL_BEFORE_RESUME  shell text run after the kill, before resume
#   RUN_ID      the run of the last resume_case
#
#   cancel_case NAME MANIFEST NTASKS
#       runs MANIFEST until every task started, SIGKILLs vigil and every
#       monitor, then `vigil cancel`: exit 0, every task CANCELLED.
#
# The caller then checks the remote side (containers, processes, dirs,
# sandboxes) for leftovers.

# The run directory of the last run (asked once per run).
rl_dir() {
	if [ "${RL_DIR_OF:-}" != "$RUN_ID" ]; then
		RL_DIR=$("$VIGIL" status --json "$RUN_ID" | python3 -c '
import json, sys; print(json.load(sys.stdin)["dir"])')
		RL_DIR_OF=$RUN_ID
	fi
	echo "$RL_DIR"
}

# "STATE STATE ..." of the run's tasks.
rl_states() {
	"$VIGIL" status --json "$RUN_ID" | python3 -c '
import json, sys
print(" ".join(t["state"] for t in json.load(sys.stdin)["tasks"]))'
}

# The counter file of task $2 of case $1.
rl_count() {
	if [ "${COUNT_IN_TASK_DIR:-0}" = 1 ]; then
		cat "$RL_DIR/tasks/$2/count" 2>/dev/null | wc -l
	else
		cat "$tmp/count/$1.$2" 2>/dev/null | wc -l
	fi
}

# Starts MANIFEST $2 (case $1, $3 tasks) in the background: sets vpid,
# RUN_ID and RL_DIR, and waits until every task printed "begin".
rl_start() {
	mkdir -p "$tmp/count"
	"$VIGIL" run -q --jobs "$3" "$2" >"$tmp/$1.run.out" \
		2>"$tmp/$1.run.err" &
	vpid=$!
	prev=${RUN_ID:-}
	RUN_ID=
	i=0
	while [ $i -lt 600 ]; do
		RUN_ID=$("$VIGIL" status --json last 2>/dev/null | python3 -c '
import json, sys; print(json.load(sys.stdin)["id"])' 2>/dev/null)
		[ -n "$RUN_ID" ] && [ "$RUN_ID" != "$prev" ] && break
		RUN_ID=
		sleep 0.1
		i=$((i + 1))
	done
	rl_dir >/dev/null
	i=0
	until [ "$(cat "$RL_DIR"/tasks/*/stdout 2>/dev/null |
	    grep -c begin)" -ge "$3" ] || [ $i -ge 900 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "$1: every task started before the kill" "$(cat \
	    "$RL_DIR"/tasks/*/stdout 2>/dev/null | grep -c begin)" "$3"
}

# SIGKILLs vigil and, with $1 = all, every monitor it recorded (their
# pids stay in $monitors).
rl_kill() {
	monitors=$(cat "$RL_DIR"/tasks/*/monitor 2>/dev/null | cut -d' ' -f1)
	kill -9 "$vpid"
	if [ "$1" = all ]; then
		for m in $monitors; do
			kill -9 "$m" 2>/dev/null
		done
	fi
	wait "$vpid" 2>/dev/null
}

# "W W ... W", $2 times.
rl_repeat() {
	k=0
	while [ $k -lt "$2" ]; do
		printf '%s' "$1"
		k=$((k + 1))
		[ $k -lt "$2" ] && printf ' '
	done
}

resume_case() {
	name=$1 mf=$2 n=$3 mode=$4
	rl_start "$name" "$mf" "$n"
	rl_kill "$mode"
	[ -n "${RL_BEFORE_RESUME:-}" ] && eval "$RL_BEFORE_RESUME"
	check "$name: interrupted" "$("$VIGIL" status --json "$RUN_ID" |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" \
	    INTERRUPTED
	"$VIGIL" resume -q "$RUN_ID" >"$tmp/$name.resume.out" \
		2>"$tmp/$name.resume.err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$tmp/$name.resume.err"; "$VIGIL" status \
	    "$RUN_ID"; }
	check "$name: resume exit status" "$rc" 0
	check "$name: every task completed" "$(rl_states)" \
	    "$(rl_repeat SUCCEEDED "$n")"
	k=0
	runs=1
	[ "$mode" = all ] && runs=${RL_RUNS:-1}
	while [ $k -lt "$n" ]; do
		check "$name: task $k ran $runs time(s)" \
		    "$(rl_count "$name" $k)" "$runs"
		check "$name: task $k output whole" \
		    "$(cat "$RL_DIR/tasks/$k/stdout")" "begin
end"
		k=$((k + 1))
	done
	if [ "$mode" = all ] && [ "$runs" = 1 ]; then
		# Each attempt was followed by a new monitor.
		after=$(cat "$RL_DIR"/tasks/*/monitor | cut -d' ' -f1)
		check "$name: new monitors followed" "$(for m in $after; do
		    case " $(echo $monitors) " in *" $m "*) echo same;; esac
		    done)" ""
	fi
	check "$name: $runs attempt(s) each" "$("$VIGIL" status --json \
	    "$RUN_ID" | python3 -c '
import json, sys
print(" ".join(str(t["attempts"]) for t in json.load(sys.stdin)["tasks"]))')" \
	    "$(rl_repeat "$runs" "$n")"
}

cancel_case() {
	name=$1 mf=$2 n=$3
	rl_start "$name" "$mf" "$n"
	rl_kill all
	"$VIGIL" cancel "$RUN_ID" >"$tmp/$name.cancel.out" 2>&1
	check "$name: cancel exit status" "$?" 0
	check "$name: every task cancelled" "$(rl_states)" \
	    "$(rl_repeat CANCELLED "$n")"
}

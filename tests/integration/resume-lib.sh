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

resume_case() {
	name=$1 mf=$2 n=$3 mode=$4
	mkdir -p "$tmp/count"
	"$VIGIL" run -q --jobs "$n" "$mf" >"$tmp/$name.run.out" \
		2>"$tmp/$name.run.err" &
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
	# Every task started: its counter line and its "begin" are here.
	i=0
	while [ $i -lt 900 ]; do
		ok=0
		k=0
		while [ $k -lt "$n" ]; do
			[ "$(rl_count "$name" $k)" -ge 1 ] &&
			    grep -q begin "$RL_DIR/tasks/$k/stdout" \
			    2>/dev/null && ok=$((ok + 1))
			k=$((k + 1))
		done
		[ $ok -eq "$n" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	check "$name: every task started before the kill" "$ok" "$n"
	monitors=
	k=0
	while [ $k -lt "$n" ]; do
		m=$(cut -d' ' -f1 "$(rl_dir)/tasks/$k/monitor" 2>/dev/null)
		monitors="$monitors $m"
		k=$((k + 1))
	done
	kill -9 "$vpid"
	if [ "$mode" = all ]; then
		for m in $monitors; do
			kill -9 "$m" 2>/dev/null
		done
	fi
	wait "$vpid" 2>/dev/null
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
	want=
	k=0
	while [ $k -lt "$n" ]; do
		want="$want SUCCEEDED"
		k=$((k + 1))
	done
	check "$name: every task completed" "$(rl_states)" "${want# }"
	k=0
	runs=1
	[ "$mode" = all ] && runs=${RL_RUNS:-1}
	while [ $k -lt "$n" ]; do
		check "$name: task $k ran $runs time(s)" \
		    "$(rl_count "$name" $k)" "$runs"
		check "$name: task $k output whole" \
		    "$(cat "$(rl_dir)/tasks/$k/stdout")" "begin
end"
		k=$((k + 1))
	done
	if [ "$mode" = all ] && [ "$runs" = 1 ]; then
		# Each attempt was followed by a new monitor.
		after=
		k=0
		while [ $k -lt "$n" ]; do
			after="$after $(cut -d' ' -f1 \
			    "$(rl_dir)/tasks/$k/monitor" 2>/dev/null)"
			k=$((k + 1))
		done
		check "$name: new monitors followed" "$(for m in $after; do
		    case " $monitors " in *" $m "*) echo same;; esac; done)" ""
	fi
	check "$name: $runs attempt(s) each" "$("$VIGIL" status --json \
	    "$RUN_ID" | python3 -c '
import json, sys
print(" ".join(str(t["attempts"]) for t in json.load(sys.stdin)["tasks"]))')" \
	    "$(k=0; while [ $k -lt "$n" ]; do printf '%s' "$runs";
	    k=$((k + 1)); [ $k -lt "$n" ] && printf ' '; done)"
}

cancel_case() {
	name=$1 mf=$2 n=$3
	mkdir -p "$tmp/count"
	"$VIGIL" run -q --jobs "$n" "$mf" >/dev/null 2>&1 &
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
	    grep -c begin)" -ge "$n" ] || [ $i -ge 900 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	mons=$(cat "$RL_DIR"/tasks/*/monitor 2>/dev/null | cut -d' ' -f1)
	kill -9 "$vpid"
	for m in $mons; do
		kill -9 "$m" 2>/dev/null
	done
	wait "$vpid" 2>/dev/null
	"$VIGIL" cancel "$RUN_ID" >"$tmp/$name.cancel.out" 2>&1
	check "$name: cancel exit status" "$?" 0
	want=
	k=0
	while [ $k -lt "$n" ]; do
		want="$want CANCELLED"
		k=$((k + 1))
	done
	check "$name: every task cancelled" "$(rl_states)" "${want# }"
}

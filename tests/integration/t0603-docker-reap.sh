#!/bin/sh
# Docker backend: after kill -9 of the process watching a container, the
# container keeps running with vigil's labels; reap without a run id
# removes it (its owner is gone) and leaves containers of live owners
# alone; reap with a run id removes that run's containers.
. "$(dirname "$0")/docker-lib.sh"
mkdir -p "$tmp/t1" "$tmp/t2"

wait_running() {
	i=0
	until [ -n "$(vigil_containers "vigil.run=$1")" ]; do
		i=$((i + 1)); [ $i -lt 300 ] || return 1; sleep 0.1
	done
	# and its log stream has started
	until grep -q up "$2/stdout" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 300 ] || return 1; sleep 0.1
	done
}

"$DA" --task-dir "$tmp/t1" --run-id dead1 --index 4 run -c \
	'echo up; sleep 120' >/dev/null 2>&1 &
p1=$!
"$DA" --task-dir "$tmp/t2" --run-id live1 run -c 'echo up; sleep 120' \
	>/dev/null 2>&1 &
p2=$!
cleanup_extra="kill -9 $p1 $p2 2>/dev/null"
wait_running dead1 "$tmp/t1" || { echo "FAIL: dead1 never ran"; exit 1; }
wait_running live1 "$tmp/t2" || { echo "FAIL: live1 never ran"; exit 1; }
kill -9 $p1
wait $p1 2>/dev/null

id=$(vigil_containers vigil.run=dead1)
check "container survives its owner" "$(echo "$id" | wc -l)" "1"
state=$(api GET "/v1.41/containers/$id/json" | python3 -c \
	'import json,sys; j=json.load(sys.stdin); print(j["State"]["Status"], j["Config"]["Labels"]["vigil.task"])')
check "still running, labelled" "$state" "running 4"

out=$("$DA" reap)
check "reap of dead owners" "$out" "docker: removed container \
$(echo "$id" | cut -c1-12) (run dead1, task 4)"
check "dead run's container gone" "$(vigil_containers vigil.run=dead1)" ""
check "live run's container kept" "$(vigil_containers vigil.run=live1 | wc -l)" "1"

id2=$(vigil_containers vigil.run=live1)
out=$("$DA" reap live1)
check "reap by run id" "$out" "docker: removed container \
$(echo "$id2" | cut -c1-12) (run live1, task 0)"
check "no vigil container left" "$(vigil_containers)" ""
wait $p2 2>/dev/null
out=$("$DA" reap)
check "reap with nothing to do" "$out" ""
exit $fail

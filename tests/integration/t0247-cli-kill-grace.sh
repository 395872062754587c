#!/bin/sh
# kill_grace: 0 means SIGKILL at once.  A task that ignores SIGTERM and
# outlives its timeout ends TIMEOUT right after it, under `vigil run`
# (the driver) as under the backend, not after a default grace put in
# the place of 0; with kill_grace: 3 it is killed after about 3 s.
set -u
. "$(dirname "$0")/engine-lib.sh"
mf() {	# name grace
	cat >"$W/$1.yaml" <<Y
version: 1
name: $1
timeout: 1
kill_grace: $2
command: trap '' TERM; echo up; sleep 60
Y
}
# elapsed NAME: seconds the run of manifest NAME took, and its end state
elapsed() {
	t0=$(date +%s%N)
	"$VIGIL" run -q "$W/$1.yaml" >"$W/$1.out" 2>&1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
mf nograce 0
ms=$(elapsed nograce)
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
expect_eq "state with kill_grace 0" TIMEOUT "$(jq_run "$id" "d['tasks'][0]['state']")"
# 1 s timeout + at once: well under the 1 + 10 s a default grace would take
[ "$ms" -lt 8000 ] || fail "kill_grace 0 took $ms ms (a default grace in its place?)"
mf grace 3
ms=$(elapsed grace)
[ "$ms" -ge 3500 ] || fail "kill_grace 3 took only $ms ms"
echo "ok: kill_grace 0 kills at once, 3 waits"

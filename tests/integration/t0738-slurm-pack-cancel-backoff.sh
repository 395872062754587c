#!/bin/sh
# vigil cancel RUN/TASK of a packed task while it waits out its retry's
# backoff: the driver gives up the place its pack keeps for the retry at
# once (claim "new"), so the pack stops waiting for it then, not when
# the run ends or its wait (VIGIL_PACK_RETRY_WAIT) runs out.  Task 0
# fails with a 60 s backoff; task 1, in the same pack, holds until the
# test lets it go.  After the cancel task 0's claim says "new" while task
# 1 still runs; the run ends with task 0 CANCELLED after one attempt and
# task 1 SUCCEEDED.
set -u
. "$(dirname "$0")/slurm-lib.sh"

slurm_yaml "$W/c.yaml" cb 2 "|
  case \${{ matrix.i }} in
  0) exit 3 ;;
  1) i=0; while [ ! -e $W/go ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i+1)); done ;;
  esac" \
    "retry:
  max: 2
  on: [failed]
  backoff: 60s" "" "pack:
  tasks: 2"
"$VIGIL" run -q "$W/c.yaml" >"$W/out" 2>&1 & rp=$!
# The driver has recorded task 0's failure and waits out its backoff
# (PENDING after one attempt).
i=0
while [ $i -lt 600 ]; do
	id=$(last_run 2>/dev/null)
	[ -n "$id" ] && [ "$(jq_run "$id" '"%s %d" % (d["tasks"][0]["state"], d["tasks"][0]["attempts"])' 2>/dev/null)" = "PENDING 1" ] && break
	sleep 0.2; i=$((i + 1))
done
[ $i -lt 600 ] || fail "task 0 never waited for its retry: $(cat "$W/out")"
rd=$VIGIL_HOME/runs/$id
# Nothing claimed its retry yet.
[ -e "$rd/tasks/0/claim.2" ] && fail "retry claimed before the cancel: $(cat "$rd/tasks/0/claim.2")"
"$VIGIL" cancel "$id/0" >"$W/cancel" 2>&1 || fail "cancel: $(cat "$W/cancel")"
i=0
until [ "$(cut -d' ' -f1 "$rd/tasks/0/claim.2" 2>/dev/null)" = new ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the pack was not told: claim.2 '$(cat "$rd/tasks/0/claim.2" 2>&1)'"
	sleep 0.1
done
kill -0 $rp 2>/dev/null || fail "the run ended before task 1 was let go"
touch "$W/go"
wait $rp
expect_eq "run exit ($(cat "$W/out"))" 5 $?
expect_eq "states" "CANCELLED SUCCEEDED" "$(states "$id")"
expect_eq "attempts" "1 1" \
    "$(jq_run "$id" '" ".join(str(t["attempts"]) for t in d["tasks"])')"
pass

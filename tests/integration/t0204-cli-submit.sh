#!/bin/sh
# vigil submit prints the run id at once; the run goes on in a detached
# process (own session, stdio to RUN_DIR/vigil.log) that survives the
# submitting shell and its process group being hung up.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/s.yaml" <<'Y'
version: 1
name: sub
matrix:
  i: [1, 2]
command: sleep 1.5; echo "task ${{ matrix.i }}"
Y
start=$(date +%s%N)
# The shell submits, then hangs up its whole process group and exits.
setsid sh -c "'$VIGIL' submit '$W/s.yaml' > '$W/id'; kill -HUP 0" 2>"$W/err"
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ $took -lt 1400 ] || fail "submit took ${took} ms (it must not wait)"
id=$(cat "$W/id")
[ -n "$id" ] || fail "no run id printed: $(cat "$W/err")"
pid=$(jq_run "$id" 'd["pid"]')
[ "$pid" != None ] || fail "no live driver"
expect_eq "driver is a session leader's child" 1 \
    "$(ps -o sid= -p "$pid" | awk -v p="$pid" '{ print ($1 != p) }')"
# Wait for the end (status --watch returns when the run ends).
"$VIGIL" status "$id" --watch >/dev/null
expect_eq "state" SUCCEEDED "$(jq_run "$id" 'd["state"]')"
expect_eq "logs" "task 2" "$("$VIGIL" logs "$id/1")"
grep -q "run $id SUCCEEDED" "$VIGIL_HOME/runs/$id/vigil.log" ||
    fail "log: $(cat "$VIGIL_HOME/runs/$id/vigil.log")"
pass

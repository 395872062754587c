#!/bin/sh
# demo.sh - runs examples/jobs/sweep.yaml (a 2 x 3 matrix) with the live
# progress display, then shows what vigil recorded: the run's tasks with
# their exit statuses, and one task's output.  State goes to a private
# VIGIL_HOME under build/ unless one is set.
set -u
cd "$(dirname "$0")/.."
VIGIL_HOME="${VIGIL_HOME:-$PWD/build/demo-home}"
export VIGIL_HOME
vigil=build/vigil

echo "== vigil run examples/jobs/sweep.yaml   (state in $VIGIL_HOME)"
"$vigil" run examples/jobs/sweep.yaml
rc=$?
echo
echo "== vigil status last"
"$vigil" status last || exit 4
echo
echo "== vigil logs last/5"
"$vigil" logs last/5 || exit 4
echo
echo "Try: $vigil status; $vigil run examples/jobs/retry.yaml;" \
    "$vigil run examples/jobs/timeout.yaml"
echo "(with VIGIL_HOME=$VIGIL_HOME)"
exit $rc

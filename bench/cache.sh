#!/bin/sh
# cache.sh - what a result reused across runs costs (docs/reuse.md).
#
# A sweep of N (10,000) `true` tasks with reuse: true, run twice through
# `vigil run --jobs 2` on the local backend: the second time with NEW
# (10) more matrix values.  Prints the first run's time per task, the
# second run's tasks run (must be NEW) and CACHED, and its time per hit:
# its whole wall time (start, load, gate, record, drive, exit) divided by
# its hits, a bound on what one hit costs (target: <= 0.2 ms), and the
# CPU time (user + system, GNU time) of that run per hit.
#
# N=... and NEW=... change the counts.  Uses build/vigil unless VIGIL is
# set.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
VIGIL=${VIGIL:-$top/build/vigil}
N=${N:-10000}
NEW=${NEW:-10}
W=$(mktemp -d /tmp/vigil-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT INT TERM
export VIGIL_HOME="$W/home"

# The sweep of $1 tasks: a range axis, so its values are 0 .. $1 - 1 and
# a longer one adds values at the end.
for n in "$N" $((N + NEW)); do
	printf 'version: 1\nname: bench-cache\nreuse: true\ncommand: ["true"]\nmatrix:\n  i: {range: [0, %d]}\n' \
	    "$n" >"$W/m$n.yaml"
done
now_ms() { date +%s%3N; }
cd "$top"
t0=$(now_ms)
"$VIGIL" run -q --jobs 2 "$W/m$N.yaml"
t1=$(now_ms)
/usr/bin/time -f "%U %S" -o "$W/cpu" \
    "$VIGIL" run -q --jobs 2 "$W/m$((N + NEW)).yaml"
t2=$(now_ms)
"$VIGIL" status last --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = {}
for t in d["tasks"]:
    n[t["state"]] = n.get(t["state"], 0) + 1
print(n.get("SUCCEEDED", 0), n.get("CACHED", 0))' >"$W/counts"
read -r ran hits <"$W/counts"
first=$((t1 - t0))
second=$((t2 - t1))
echo "first run:  $N tasks in $first ms: $(echo "$first $N" |
    awk '{ printf "%.3f", $1 / $2 }') ms per task"
echo "second run: $ran run, $hits CACHED in $second ms"
[ "$ran" -eq "$NEW" ] || { echo "FAIL: $ran tasks ran, not $NEW" >&2; exit 1; }
echo "per hit:    $(echo "$second $hits" |
    awk '{ printf "%.4f", $1 / $2 }') ms (whole second run / hits;" \
    "target <= 0.2 ms)"
echo "CPU per hit: $(awk -v h="$hits" '{ printf "%.4f", ($1 + $2) * 1000 / h }' \
    "$W/cpu") ms (user + system of the second run / hits)"

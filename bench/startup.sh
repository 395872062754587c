#!/bin/sh
# startup.sh - the cost of starting a vigil process at all (`vigil
# version`), against exec'ing /bin/true, interleaved in blocks so that a
# shared machine's load hits both alike.  vigil loads libcurl only on its
# first HTTP call (common/curl.c); this is what every `vigil exec`,
# `status`, `check` and `task-exec` pays before doing anything.
# N=400 starts of each by default.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-400}
BLOCK=${BLOCK:-20}
VIGIL=${B:-$top/build/release}/vigil
[ -x "$VIGIL" ] || make -C "$top" --no-print-directory >/dev/null
now() { date +%s%N; }
tb=0 tv=0 i=0
while [ $i -lt "$N" ]; do
	t0=$(now); j=0
	while [ $j -lt "$BLOCK" ]; do /bin/true; j=$((j + 1)); done
	t1=$(now); j=0
	while [ $j -lt "$BLOCK" ]; do "$VIGIL" version >/dev/null; j=$((j + 1)); done
	t2=$(now)
	tb=$((tb + t1 - t0)); tv=$((tv + t2 - t1))
	i=$((i + BLOCK))
done
awk -v b="$tb" -v v="$tv" -v n="$N" 'BEGIN {
    printf "/bin/true %.2f ms  vigil version %.2f ms  difference %+.2f ms  ratio %.2fx\n",
    b / n / 1e6, v / n / 1e6, (v - b) / n / 1e6, v / b }'

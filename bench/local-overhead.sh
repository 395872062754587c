#!/bin/sh
# local-overhead.sh - vigil's per-task overhead on the local backend.
#
#   1. 1000 tasks of `true` through `vigil run --jobs 2` (state journaled
#      in sqlite as always) against `xargs -P2` running the same 1000
#      `true` in this same script run; prints both times and the ratio
#      (target: vigil <= 1.25 x xargs).
#   2. A 10,000-task run's peak RSS (GNU time's %M); target < 30 MB.
#
# With --cron instead: what overlap control costs.  RUNS=40 one-task runs
# of `vigil run -q` and as many of `vigil run --cron` (group lock, holder
# scan of the store, log capture), alternating so the store grows alike
# for both; prints both totals and medians and the ratio of the medians
# (target: cron <= 1.05 x plain, i.e. no measurable cost).
#   --accounting: instead, what run accounting costs in this binary: the
#      same 1000-task run with accounting and with VIGIL_NO_ACCOUNTING=1
#      (a bench-only switch: the driver records no usage and skips the
#      end-of-run efficiency pass), alternating, ROUNDS (7) of each; prints
#      the best wall and CPU time of each and their ratios (target:
#      with/without <= 1.02).
#
# N=... and BIG=... change the task counts.  Uses build/vigil unless
# VIGIL is set.
set -eu
cd "$(dirname "$0")/.."
VIGIL=${VIGIL:-$PWD/build/vigil}
N=${N:-1000}
BIG=${BIG:-10000}
W=$(mktemp -d /tmp/vigil-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT INT TERM
VIGIL_HOME=$W/home
export VIGIL_HOME

# A manifest of n tasks: one matrix axis of n values, argv command.
manifest() {
	{
		echo "version: 1"
		echo "name: bench-$1"
		echo "command: [\"true\"]"
		echo "matrix:"
		printf "  i: ["
		i=0
		while [ $i -lt "$1" ]; do
			[ $i -gt 0 ] && printf ", "
			printf "%d" $i
			i=$((i + 1))
		done
		echo "]"
	} >"$W/m$1.yaml"
}

now_ms() { date +%s%3N; }

if [ "${1:-}" = --cron ]; then
	RUNS=${RUNS:-40}
	printf 'version: 1\nname: bench-cron\ncommand: ["true"]\n' >"$W/one.yaml"
	"$VIGIL" run -q "$W/one.yaml"		# the store exists for both
	: >"$W/plain" && : >"$W/cron"
	k=0
	while [ $k -lt "$RUNS" ]; do
		t0=$(now_ms)
		"$VIGIL" run -q "$W/one.yaml"
		t1=$(now_ms)
		"$VIGIL" run --cron "$W/one.yaml"
		t2=$(now_ms)
		echo $((t1 - t0)) >>"$W/plain"
		echo $((t2 - t1)) >>"$W/cron"
		k=$((k + 1))
	done
	# Medians: the machine is shared, a sum is at the mercy of outliers.
	median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	sum() { awk '{ s += $1 } END { print s }' "$1"; }
	p=$(median "$W/plain") c=$(median "$W/cron")
	echo "vigil run -q:     $RUNS one-task runs in $(sum "$W/plain") ms, median ${p} ms"
	echo "vigil run --cron: $RUNS one-task runs in $(sum "$W/cron") ms, median ${c} ms"
	awk -v c="$c" -v p="$p" \
	    'BEGIN { r = c / p; printf "ratio cron/plain (medians): %.3f (target <= 1.05): %s\n", r, r <= 1.05 ? "ok" : "OVER" }'
	exit 0
fi

manifest "$N"
manifest "$BIG"
true_bin=$(command -v true)

if [ "${1:-}" = --accounting ]; then
	# Alternating runs, each in a fresh home, so that load drifting on
	# a shared machine hits both; the best of each is the least
	# disturbed.  CPU time (user + system of vigil and everything it
	# started, GNU time's %U + %S) is measured too: on a loaded machine
	# it wanders far less than the wall time.
	ROUNDS=${ROUNDS:-7}
	k=0
	: >"$W/acct"
	while [ $k -lt "$ROUNDS" ]; do
		for v in off on; do
			VIGIL_HOME=$W/home-$v-$k
			export VIGIL_HOME
			if [ $v = off ]; then
				VIGIL_NO_ACCOUNTING=1 /usr/bin/time -f '%e %U %S' \
				    -o "$W/t" "$VIGIL" run -q --jobs 2 \
				    "$W/m$N.yaml" >/dev/null
			else
				/usr/bin/time -f '%e %U %S' -o "$W/t" \
				    "$VIGIL" run -q --jobs 2 "$W/m$N.yaml" >/dev/null
			fi
			echo "$v $(tail -n 1 "$W/t")" >>"$W/acct"
		done
		k=$((k + 1))
	done
	awk -v n="$N" -v r="$ROUNDS" '
	{ w = $2 * 1000; c = ($3 + $4) * 1000
	  if (!($1 in bw) || w < bw[$1]) bw[$1] = w
	  if (!($1 in bc) || c < bc[$1]) bc[$1] = c
	  all[$1] = all[$1] sprintf(" %.0f", w) }
	END {
	  printf "vigil run -j 2, %d x true, accounting off: wall %.0f ms, cpu %.0f ms (best of %d; walls:%s)\n", n, bw["off"], bc["off"], r, all["off"]
	  printf "vigil run -j 2, %d x true, accounting on:  wall %.0f ms, cpu %.0f ms (best of %d; walls:%s)\n", n, bw["on"], bc["on"], r, all["on"]
	  rw = bw["on"] / bw["off"]; rc = bc["on"] / bc["off"]
	  printf "ratio on/off: wall %.3f, cpu %.3f (target <= 1.02): %s\n", rw, rc, rw <= 1.02 && rc <= 1.02 ? "ok" : "OVER"
	}' "$W/acct"
	exit 0
fi

t0=$(now_ms)
seq "$N" | xargs -P2 -I{} "$true_bin"
t1=$(now_ms)
"$VIGIL" run -q --jobs 2 "$W/m$N.yaml"
t2=$(now_ms)
xargs_ms=$((t1 - t0))
vigil_ms=$((t2 - t1))
echo "xargs -P2:        $N x true in ${xargs_ms} ms"
echo "vigil run -j 2:   $N x true in ${vigil_ms} ms"
awk -v v="$vigil_ms" -v x="$xargs_ms" \
    'BEGIN { r = v / x; printf "ratio vigil/xargs: %.2f (target <= 1.25): %s\n", r, r <= 1.25 ? "ok" : "OVER" }'

/usr/bin/time -f %M -o "$W/rss" "$VIGIL" run -q --jobs 2 "$W/m$BIG.yaml"
rss=$(tail -n 1 "$W/rss")
echo "vigil run of $BIG tasks: peak RSS ${rss} kB (target < 30720 kB): $( [ "$rss" -lt 30720 ] && echo ok || echo OVER)"

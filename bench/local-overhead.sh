#!/bin/sh
# local-overhead.sh - vigil's per-task overhead on the local backend.
#
#   1. 1000 tasks of `true` through `vigil run --jobs 2` (state journaled
#      in sqlite as always) against `xargs -P2` running the same 1000
#      `true` in this same script run, ROUNDS (7) rounds of one each;
#      prints both times of each round and the median of the rounds'
#      ratios (target: vigil <= 1.25 x xargs).
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
#      end-of-run efficiency pass), ROUNDS (15) rounds of one of each back
#      to back; prints the best wall and CPU time of each side, their
#      ratios (target: <= 1.02) and the median of the rounds' ratios.
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
	# Rounds of one run without accounting and one with, back to back
	# in a fresh home each, the order flipped every round, so that load
	# drifting on a shared machine hits both sides of a round alike.
	# Load only ever adds time, so the best of each side is the least
	# disturbed measure of it and their ratio is the verdict; each round
	# also gives a ratio on/off, whose median is printed beside it (a
	# round caught by a burst of load is an outlier on either side).  CPU time (user + system of vigil and everything it
	# started, GNU time's %U + %S) is measured as well as the wall time:
	# on a loaded machine it wanders far less.
	ROUNDS=${ROUNDS:-15}
	k=0
	: >"$W/acct"
	while [ $k -lt "$ROUNDS" ]; do
		order="off on"
		[ $((k % 2)) -eq 0 ] || order="on off"
		for v in $order; do
			VIGIL_HOME=$W/home-$v-$k
			export VIGIL_HOME
			s0=$(date +%s%N)
			if [ $v = off ]; then
				VIGIL_NO_ACCOUNTING=1 /usr/bin/time -f '%U %S' \
				    -o "$W/t" "$VIGIL" run -q --jobs 2 \
				    "$W/m$N.yaml" >/dev/null
			else
				/usr/bin/time -f '%U %S' -o "$W/t" \
				    "$VIGIL" run -q --jobs 2 "$W/m$N.yaml" >/dev/null
			fi
			s1=$(date +%s%N)
			echo "$k $v $(( (s1 - s0) / 1000 )) $(tail -n 1 "$W/t")" >>"$W/acct"
			rm -rf "$VIGIL_HOME"
		done
		k=$((k + 1))
	done
	awk -v n="$N" -v r="$ROUNDS" '
	function median(a, m,   i, j, t) {
		for (i = 1; i <= m; i++)
			for (j = i + 1; j <= m; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	{ w[$1, $2] = $3 / 1000; c[$1, $2] = ($4 + $5) * 1000
	  if (!($2 in bw) || w[$1, $2] < bw[$2]) bw[$2] = w[$1, $2]
	  if (!($2 in bc) || c[$1, $2] < bc[$2]) bc[$2] = c[$1, $2] }
	END {
	  for (k = 0; k < r; k++) {
		rw[k + 1] = w[k, "on"] / w[k, "off"]
		rc[k + 1] = c[k, "off"] > 0 ? c[k, "on"] / c[k, "off"] : 1
		all = all sprintf(" %.3f", rw[k + 1])
	  }
	  mw = median(rw, r); mc = median(rc, r)
	  printf "vigil run -j 2, %d x true, accounting off: best wall %.0f ms, cpu %.0f ms\n", n, bw["off"], bc["off"]
	  printf "vigil run -j 2, %d x true, accounting on:  best wall %.0f ms, cpu %.0f ms\n", n, bw["on"], bc["on"]
	  bwr = bw["on"] / bw["off"]; bcr = bc["on"] / bc["off"]
	  printf "wall ratio on/off of each of %d rounds:%s\n", r, all
	  printf "ratio on/off, median of the rounds: wall %.3f, cpu %.3f\n", mw, mc
	  printf "ratio on/off, best against best: wall %.3f, cpu %.3f (target <= 1.02): %s\n", bwr, bcr, bwr <= 1.02 && bcr <= 1.02 ? "ok" : "OVER"
	}' "$W/acct"
	exit 0
fi

# ROUNDS (default 7) rounds of xargs then vigil back to back, each vigil
# run in a fresh home; the verdict is the median of the rounds' ratios
# (a round caught by a burst of load on this shared machine is an
# outlier either way).
ROUNDS=${ROUNDS:-7}
: >"$W/pairs"
k=0
while [ $k -lt "$ROUNDS" ]; do
	t0=$(now_ms)
	seq "$N" | xargs -P2 -I{} "$true_bin"
	t1=$(now_ms)
	VIGIL_HOME=$W/home-r$k "$VIGIL" run -q --jobs 2 "$W/m$N.yaml"
	t2=$(now_ms)
	rm -rf "$W/home-r$k"
	echo "$((t1 - t0)) $((t2 - t1))" >>"$W/pairs"
	k=$((k + 1))
done
awk -v n="$N" -v la="$(cut -d' ' -f1 /proc/loadavg)" '
    { x[NR] = $1; v[NR] = $2; r[NR] = $2 / $1; all = all sprintf(" %.2f", r[NR]) }
    END {
	for (i = 1; i <= NR; i++)
		for (j = i + 1; j <= NR; j++)
			if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
	m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
	printf "xargs -P2 then vigil run -j 2, %d x true, %d rounds (load %s):\n", n, NR, la
	for (i = 1; i <= NR; i++) printf "  round %d: xargs %d ms, vigil %d ms\n", i, x[i], v[i]
	printf "ratio vigil/xargs of each round:%s\n", all
	printf "ratio vigil/xargs, median of the rounds: %.2f (target <= 1.25): %s\n", m, m <= 1.25 ? "ok" : "OVER"
    }' "$W/pairs"

/usr/bin/time -f %M -o "$W/rss" "$VIGIL" run -q --jobs 2 "$W/m$BIG.yaml"
rss=$(tail -n 1 "$W/rss")
echo "vigil run of $BIG tasks: peak RSS ${rss} kB (target < 30720 kB): $( [ "$rss" -lt 30720 ] && echo ok || echo OVER)"

# --- Scale (issue 19): vigil against `xargs -P2` and a bare posix_spawn
# loop of the same `true` (bench/spawn-loop.c, two at a time), all in
# this run, at 1,000 tasks and, with --scale (or SCALE=1, or BIG=1), at
# 100,000.  Prints per-task times, their ratios, the growth of vigil's
# per-task time from 1,000 to 100,000 tasks (target <= 1.1), peak RSS
# (target <= 50 MB at 100,000), `vigil status`, `vigil status RUN` and
# `vigil status RUN/TASK` times on the big run of `true` (best of 5,
# target <= 50 ms each), the files the run left, and the load average
# beside each figure (the machine is shared).  SCALE_N=... changes the
# big count (a multiple of 1000).
#   At each count also `output: stream` (docs/state.md): the same `true`
# run with it, then `echo hi` through xargs -P2, vigil with output files
# and vigil with output: stream, with the entries each vigil run left in
# its run directory beyond manifest.json, per 1,000 tasks (target with
# stream: <= 4, and no per-task directory).
SCALE=${SCALE:-0}
for a in "$@"; do [ "$a" = --scale ] && SCALE=1; done
[ "$BIG" = 1 ] && SCALE=1
make -s --no-print-directory bench-build >/dev/null
SPAWN=$PWD/build/release/bench/spawn-loop
# What a task directory costs: mkdir+rmdir against the pool's renames
# (common/dirpool.h), on the file system of the vigil home.
echo "task directories (bench/dirpool.c, per pair, load $(cut -d' ' -f1 /proc/loadavg)):"
"$PWD/build/release/bench/dirpool" "$W" 20000 1 | sed 's/^/  /'

# A manifest of 1000 * $2 tasks: two axes, so that it stays small; $3
# the file's name (default s$1), $4 the command (default true), $5 an
# extra top-level line.
manifest2() {
	{
		echo "version: 1"
		echo "name: scale-$1"
		echo "command: [${4:-\"true\"}]"
		[ -n "${5:-}" ] && echo "$5"
		echo "matrix:"
		echo "  a: [$(seq -s ', ' 0 999)]"
		echo "  b: [$(seq -s ', ' 0 $(($2 - 1)))]"
	} >"$W/${3:-s$1}.yaml"
}

# Entries left in the newest run directory beyond manifest.json.
run_entries() {
	run=$(ls -t "$VIGIL_HOME/runs" | head -n 1)
	find "$VIGIL_HOME/runs/$run" -mindepth 1 ! -name manifest.json | wc -l
}

load() { cut -d' ' -f1 /proc/loadavg; }

# scale_one N: one line per runner, with per-task ms and ratios.
scale_one() {
	n=$1
	manifest2 "$n" $((n / 1000))
	l0=$(load)
	t0=$(now_ms)
	/usr/bin/time -f %M -o "$W/x.rss" sh -c \
	    "seq $n | xargs -P2 -I{} $true_bin"
	t1=$(now_ms)
	sp=$("$SPAWN" "$n" 2 "$true_bin")
	t2=$(now_ms)
	/usr/bin/time -f %M -o "$W/v.rss" "$VIGIL" run -q --jobs 2 \
	    "$W/s$n.yaml"
	t3=$(now_ms)
	run=$(ls -t "$VIGIL_HOME/runs" | head -n 1)
	files=$(find "$VIGIL_HOME/runs/$run" | wc -l)
	# The same with a shim and namespaces of its own per task instead
	# of the slots' executors (backends/shim.h).
	VIGIL_NO_EXECUTOR=1 "$VIGIL" run -q --jobs 2 "$W/s$n.yaml"
	t4=$(now_ms)
	l1=$(load)
	x_ms=$((t1 - t0)); s_ms=${sp% *}; v_ms=$((t3 - t2))
	v_rss=$(tail -n 1 "$W/v.rss")
	awk -v n="$n" -v x="$x_ms" -v s="$s_ms" -v v="$v_ms" \
	    -v ne=$((t4 - t3)) \
	    -v xr="$(tail -n 1 "$W/x.rss")" -v sr="${sp#* }" -v vr="$v_rss" \
	    -v l0="$l0" -v l1="$l1" -v f="$files" 'BEGIN {
		printf "scale %d tasks (load %s..%s):\n", n, l0, l1
		printf "  spawn loop -P2: %7d ms  %6.3f ms/task  rss %6d kB\n", s, s / n, sr
		printf "  xargs -P2:      %7d ms  %6.3f ms/task  rss %6d kB\n", x, x / n, xr
		printf "  vigil -j 2:     %7d ms  %6.3f ms/task  rss %6d kB\n", v, v / n, vr
		printf "  vigil -j 2, a shim per task (VIGIL_NO_EXECUTOR=1): %d ms  %6.3f ms/task  ratio to xargs -P2 %.2f\n", ne, ne / n, ne / x
		printf "  ratio vigil/xargs %.2f (one run; the 1.25 verdict is the median of the rounds above); vigil/spawn loop %.2f\n", v / x, v / s
		printf "  files and directories in the run directory: %d\n", f
	}'
	echo "$n $v_ms $v_rss" >>"$W/scale"
	main_run=$(ls -t "$VIGIL_HOME/runs" | head -n 1)

	# output: stream, on the same `true`, then on `echo hi`.
	manifest2 "$n" $((n / 1000)) t$n '"true"' "output: stream"
	manifest2 "$n" $((n / 1000)) e$n '"echo", "hi"'
	manifest2 "$n" $((n / 1000)) es$n '"echo", "hi"' "output: stream"
	echo_bin=$(command -v echo)
	l0=$(load)
	t0=$(now_ms)
	"$VIGIL" run -q --jobs 2 "$W/t$n.yaml"
	t1=$(now_ms)
	seq $n | xargs -P2 -I{} "$echo_bin" hi >/dev/null
	t2=$(now_ms)
	"$VIGIL" run -q --jobs 2 "$W/e$n.yaml"
	t3=$(now_ms)
	e_files=$(run_entries)
	"$VIGIL" run -q --jobs 2 "$W/es$n.yaml"
	t4=$(now_ms)
	s_files=$(run_entries)
	l1=$(load)
	awk -v n="$n" -v x="$x_ms" -v v="$v_ms" -v vs=$((t1 - t0)) \
	    -v ex=$((t2 - t1)) -v ef=$((t3 - t2)) -v es=$((t4 - t3)) \
	    -v nf="$e_files" -v ns="$s_files" -v l0="$l0" -v l1="$l1" 'BEGIN {
		printf "output: stream, %d tasks (load %s..%s):\n", n, l0, l1
		printf "  true:    vigil stream %7d ms  %6.3f ms/task  ratio to xargs -P2 %.2f, to vigil files %.2f\n", vs, vs / n, vs / x, vs / v
		printf "  echo hi: xargs -P2      %7d ms  %6.3f ms/task\n", ex, ex / n
		printf "  echo hi: vigil files    %7d ms  %6.3f ms/task  ratio to xargs -P2 %.2f\n", ef, ef / n, ef / ex
		printf "  echo hi: vigil stream   %7d ms  %6.3f ms/task  ratio to xargs -P2 %.2f, to vigil files %.2f\n", es, es / n, es / ex, es / ef
		printf "  entries beyond manifest.json per 1,000 tasks: files %.1f, stream %.1f (target with stream <= 4): %s\n", nf * 1000 / n, ns * 1000 / n, ns * 1000 / n <= 4 ? "ok" : "OVER"
	}'
}

: >"$W/scale"
scale_one 1000
if [ "$SCALE" = 1 ]; then
	big=${SCALE_N:-100000}
	scale_one "$big"
	# The big run of `true` with output files; best of 5 of each, the
	# three commands taking turns (load only ever adds time).
	run=$main_run
	l0=$(load)
	: >"$W/st"
	for k in 1 2 3 4 5; do
		t0=$(now_ms); "$VIGIL" status >/dev/null
		t1=$(now_ms); "$VIGIL" status "$run" >/dev/null
		t2=$(now_ms); "$VIGIL" status "$run/$((big / 2))" >/dev/null
		t3=$(now_ms)
		echo "$((t1 - t0)) $((t2 - t1)) $((t3 - t2))" >>"$W/st"
	done
	awk -v l0="$l0" -v l1="$(load)" '
	    NR == 1 || $1 < a { a = $1 } NR == 1 || $2 < b { b = $2 }
	    NR == 1 || $3 < c { c = $3 }
	    END { ok = a <= 50 && b <= 50 && c <= 50
		printf "vigil status: %d ms, vigil status RUN: %d ms, vigil status RUN/TASK: %d ms (best of %d, load %s..%s; target <= 50 ms each): %s\n", a, b, c, NR, l0, l1, ok ? "ok" : "OVER" }' "$W/st"
	awk -v big="$big" 'NR == 1 { p1 = $2 / $1 } NR == 2 { p2 = $2 / $1; r = $3 }
	    END { g = p2 / p1
		printf "per-task time %d / 1000 tasks: %.2f (target <= 1.1): %s\n", big, g, g <= 1.1 ? "ok" : "OVER"
		printf "peak RSS of the %d-task run: %d kB (target <= 51200 kB at 100000): %s\n", big, r, r <= 51200 ? "ok" : "OVER" }' "$W/scale"
fi

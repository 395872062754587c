#!/bin/sh
# run-fuzz.sh FUZZ_BUILD_DIR SECONDS - runs each libFuzzer harness for
# SECONDS with its seed corpus tests/fuzz/corpus/<name>/ (if present).
set -eu
dir=$1 secs=$2
here=$(cd "$(dirname "$0")" && pwd)
for f in "$dir"/fuzz-*; do
	[ -x "$f" ] || continue
	case "$f" in *.d|*.o) continue ;; esac
	name=$(basename "$f")
	work=$dir/corpus-$name
	mkdir -p "$work"
	seeds=$here/fuzz/corpus/$name
	echo "== $name (${secs}s)"
	if [ -d "$seeds" ]; then
		"$f" -max_total_time="$secs" -print_final_stats=1 "$work" "$seeds"
	else
		"$f" -max_total_time="$secs" -print_final_stats=1 "$work"
	fi
done

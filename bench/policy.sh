#!/bin/sh
# policy.sh - policy gate throughput on one core: classifies the corpus
# (tests/policy/*.tsv) repeatedly and prints commands per second, the
# ratio against a regex-list gate timed in the same run, and resident
# memory after warm-up and at the end.  Target: >= 200,000 commands/s.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
make --no-print-directory policy-bench >/dev/null
secs=${POLICY_BENCH_SECONDS:-3}
exec taskset -c 0 build/release/bench/policy-bench "$secs" \
	tests/policy/corpus.tsv tests/policy/holdout.tsv

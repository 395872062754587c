#!/bin/sh
# isolation-overhead.sh [N] - per-task cost of the local backend's
# isolation levels (none, standard, strict) against posix_spawn+waitpid
# of the same `true`, all measured in this one run, levels interleaved.
# Targets (issue 4): standard - none <= 1 ms, strict - none <= 3 ms.
set -eu
cd "$(dirname "$0")/.."
make -s --no-print-directory bench-build
exec build/release/bench/isolation-overhead "${1:-300}"

#!/bin/sh
# demo.sh - runs the main example with a private state directory.
set -eu
cd "$(dirname "$0")/.."
export VIGIL_HOME="${VIGIL_HOME:-$PWD/build/demo-home}"
exec build/vigil run examples/jobs/sweep.yaml

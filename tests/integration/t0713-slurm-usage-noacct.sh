#!/bin/sh
# t0712 on a cluster without accounting (sacct disabled): CPU time and
# peak memory from the shim on the node, what Slurm gave is null.
SLURM_UP_ARGS=--no-accounting
export SLURM_UP_ARGS
exec sh "$(dirname "$0")/t0712-slurm-usage.sh"

#!/bin/sh
# Hostile manifest values reach Slurm as exactly one value each: a
# partition named with quotes, a fake #SBATCH line and a command
# substitution, written into the batch script and read back by sbatch
# (interface cli), is refused by slurmctld with its own message naming
# the whole value, and nothing in it runs.  A newline is refused by
# vigil, naming the field.
set -u
. "$(dirname "$0")/slurm-lib.sh"

bad='p" --mem=1 #SBATCH --qos=x $(touch '"$W"'/pwned) `touch '"$W"'/pwned2`'
cat >"$W/h.yaml" <<Y
version: 1
name: hostile
scheduler: slurm
resources:
  partition: '$bad'
slurm:
  interface: cli
  poll_min: 1s
command: "true"
Y
"$VIGIL" run -q "$W/h.yaml" >"$W/out" 2>&1
expect_eq "exit status: $(cat "$W/out")" 1 $?
id=$(last_run)
expect_eq "state" BACKEND_ERROR "$(states "$id")"
reason=$(jq_run "$id" 'd["tasks"][0]["reason"]')
case "$reason" in
"submitting submit-1.sh (1 try): 'sbatch' exited 1: sbatch: error: invalid partition specified: $bad") ;;
*) fail "reason: $reason" ;;
esac
[ -e "$W/pwned" ] && fail "command substitution ran"
[ -e "$W/pwned2" ] && fail "backticks ran"

printf 'version: 1\nname: nl\nscheduler: slurm\nresources:\n  partition: "a\\nb"\ncommand: "true"\n' >"$W/n.yaml"
"$VIGIL" run -q "$W/n.yaml" >"$W/out" 2>&1
expect_eq "newline exit status: $(cat "$W/out")" 1 $?
id=$(last_run)
expect_eq "newline state" BACKEND_ERROR "$(states "$id")"
expect_eq "newline reason" "slurm: 'resources.partition' contains a control character (0x0a at byte 1); Slurm values must be one line of printable text" \
    "$(jq_run "$id" 'd["tasks"][0]["reason"]')"
pass

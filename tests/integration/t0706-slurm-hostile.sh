#!/bin/sh
# Hostile manifest values reach Slurm as exactly one value each: a
# partition named with quotes, a fake #SBATCH line and a command
# substitution, written into the batch script and read back by sbatch
# (interface cli), is refused by slurmctld with its own message naming
# the whole value, and nothing in it runs; the same value as
# slurm.options.comment comes back intact as the job's comment.  A
# newline is refused when the manifest is loaded, naming the field and
# its place.
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

# The same through slurm.options: sbatch keeps the whole value as the
# job's comment, and nothing in it runs.
cat >"$W/o.yaml" <<Y
version: 1
name: hostile-option
scheduler: slurm
slurm:
  interface: cli
  poll_min: 1s
  options:
    comment: '$bad'
command: "true"
Y
"$VIGIL" run -q "$W/o.yaml" >"$W/out" 2>&1 || fail "option run: $(cat "$W/out")"
id=$(last_run)
expect_eq "option state" SUCCEEDED "$(states "$id")"
job=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
expect_eq "comment as Slurm keeps it" "$bad" \
    "$(scontrol show job "$job" | sed -n 's/^ *Comment=//p' | sed 's/ $//')"
[ -e "$W/pwned" ] && fail "command substitution in an option ran"
[ -e "$W/pwned2" ] && fail "backticks in an option ran"

printf 'version: 1\nname: nl\nscheduler: slurm\nresources:\n  partition: "a\\nb"\ncommand: "true"\n' >"$W/n.yaml"
"$VIGIL" run -q "$W/n.yaml" >"$W/out" 2>&1
rc=$?
# refused when the manifest is loaded: no run, no job
expect_eq "newline exit status: $(cat "$W/out")" 2 $rc
expect_eq "newline message" "$W/n.yaml:5:14: error: 'resources.partition' holds a control character (byte 0x0a at offset 1): only printable characters are valid
    5 |   partition: \"a\\nb\"
      |              ^" \
    "$(cat "$W/out")"
pass

#!/bin/sh
# vigil cancel RUN/TASK of a packed task whose run's vigil is gone leaves
# the task's marker beneath the run directory without following a link:
# a symbolic link planted at tasks/1/cancel is replaced by the marker
# (the file it points to is never made), and a link planted at tasks/2
# itself (pointing at a directory of the attacker's) is refused, naming
# it, with nothing written there and nothing recorded.  On the private
# Slurm cluster (tests/harness/slurm-up); the pack runs one task at a
# time, so tasks 1 and 2 wait in it.
set -u
it_dir=$(cd "$(dirname "$0")/../integration" && pwd)
. "$it_dir/slurm-lib.sh"

slurm_yaml "$W/l.yaml" packlink 3 "'sleep 20'" '' '' "pack:
  tasks: 3
  parallel: 1
  steps: false"
VIGIL_SLURM_KILL_AT=committed "$VIGIL" run -q "$W/l.yaml" >"$W/out" 2>&1
expect_eq "vigil killed itself ($(cat "$W/out"))" 137 $?
id=$(last_run)
rd=$VIGIL_HOME/runs/$id
mkdir -p "$rd/tasks/1" "$W/attacker"
rm -rf "$rd/tasks/1/cancel" "$rd/tasks/2"
ln -s "$W/attacker/made" "$rd/tasks/1/cancel"
ln -s "$W/attacker" "$rd/tasks/2"

"$VIGIL" cancel "$id/1" >"$W/c1" 2>&1 || fail "cancel of task 1: $(cat "$W/c1")"
[ -e "$W/attacker/made" ] && fail "the marker was written through the link at tasks/1/cancel"
[ -L "$rd/tasks/1/cancel" ] && fail "the link at tasks/1/cancel is still there"
expect_eq "task 1's marker" cancel "$(cat "$rd/tasks/1/cancel")"

"$VIGIL" cancel "$id/2" >"$W/c2" 2>&1
[ $? -ne 0 ] || fail "cancel followed the link at tasks/2: $(cat "$W/c2")"
grep -q "'tasks/2'.*symbolic link" "$W/c2" ||
	fail "the refusal does not name tasks/2: $(cat "$W/c2")"
expect_eq "written in the attacker's directory" "" "$(ls -A "$W/attacker")"
expect_eq "task 2 not recorded cancelled" 1 \
    "$(jq_run "$id" 'int(d["tasks"][2]["state"] != "CANCELLED")')"
"$VIGIL" cancel "$id" >/dev/null 2>&1 || fail "cancel of the run"
pass

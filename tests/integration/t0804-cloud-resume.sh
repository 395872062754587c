#!/bin/sh
# Cloud backends (the Daytona and Vercel fakes): kill -9 of vigil
# mid-run, then vigil resume.  With only vigil dead, the monitors are
# adopted: every task completes once and its output is whole.  With vigil
# and every monitor dead, resume follows each command from the ids its
# monitor recorded (tasks/<i>/sandbox): Daytona's session command log,
# Vercel's command log stream.  Either way every task ran once and no
# sandbox is left (the fake's own list).  Then monitors that died before
# recording their command: the sandboxes are deleted, the tasks run again.
# And vigil cancel of a run whose vigil and monitors are dead deletes its
# sandboxes.
for PROVIDER in daytona vercel; do
	(
	. "$(dirname "$0")/cloud-lib.sh"
	tmp=$W
	check() {
		[ "$2" = "$3" ] || fail "$PROVIDER: $1: expected '$3', got '$2'"
	}
	. "$(dirname "$0")/resume-lib.sh"
	start_fake
	cmd() {
		printf '%s' "'echo x >>$tmp/count/$1.\$VIGIL_TASK_INDEX; echo begin; sleep $2; echo end'"
	}
	mf adopt "$(cmd adopt 6)" 'matrix:
  i: [0, 1, 2]'
	resume_case adopt "$W/adopt.yaml" 3 vigil
	check "adopt: no sandbox left" "$(boxes)" ""
	mf follow "$(cmd follow 8)" 'matrix:
  i: [0, 1, 2]'
	resume_case follow "$W/follow.yaml" 3 all
	check "follow: no sandbox left" "$(boxes)" ""
	# Nothing to follow (the monitors died before recording their
	# command): the sandboxes, found by their tags, are deleted and the
	# tasks run again.
	mf gone "$(cmd gone 8)" 'matrix:
  i: [0, 1, 2]'
	RL_RUNS=2
	RL_BEFORE_RESUME='rm -f "$RL_DIR"/tasks/*/sandbox'
	resume_case gone "$W/gone.yaml" 3 all
	RL_BEFORE_RESUME=
	check "gone: no sandbox left" "$(boxes)" ""
	mf cancel "$(cmd cancel 120)" 'matrix:
  i: [0, 1]'
	cancel_case cancel "$W/cancel.yaml" 2
	check "cancel: sandboxes reported" "$(grep -c "^$PROVIDER: removed \
sandbox" "$W/cancel.cancel.out")" 2
	check "cancel: no sandbox left" "$(boxes)" ""
	echo "ok: $PROVIDER"
	) || exit 1
done
echo ok

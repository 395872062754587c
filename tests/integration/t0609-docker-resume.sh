#!/bin/sh
# Docker backend: kill -9 of vigil mid-run, then vigil resume.  First
# vigil alone dies (the monitors outlive it and are adopted), then vigil
# and every monitor (resume finds each container by its name and labels,
# follows its logs from where the task files end and waits for it).
# (Two tasks: the pool is this host's CPUs, so both run at once.)
# Every task completes, none runs twice (a counter file the task appends
# to), the output is whole, and no container is left (podman's list).
# Then vigil cancel of such a run removes its containers.
. "$(dirname "$0")/docker-lib.sh"
. "$here/resume-lib.sh"
COUNT_IN_TASK_DIR=1

mf() {
	cat >"$1" <<Y
version: 1
name: docker-resume
backend: docker
image: localhost/vigil-test:latest
matrix:
  i: [0, 1]
command: |
  echo x >>"\$VIGIL_TASK_DIR/count"
  echo begin
  sleep $2
  echo end
Y
}

mf "$tmp/a.yaml" 6
resume_case adopt "$tmp/a.yaml" 2 vigil
check "adopt: no container left" "$(vigil_containers "vigil.run=$RUN_ID")" ""

mf "$tmp/b.yaml" 8
resume_case follow "$tmp/b.yaml" 2 all
check "follow: no container left" "$(vigil_containers "vigil.run=$RUN_ID")" ""
check "no vigil container at all" "$(vigil_containers)" ""

# Cancelled while vigil and its monitors are dead: reap removes the
# containers.
mf "$tmp/c.yaml" 120
cancel_case cancel "$tmp/c.yaml" 2
check "cancel: containers reported" "$(grep -c '^docker: removed container' \
    "$tmp/cancel.cancel.out")" 2
check "cancel: no container left" "$(vigil_containers)" ""
exit $fail

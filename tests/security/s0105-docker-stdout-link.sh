#!/bin/sh
# A task in a container (the docker backend binds its task directory)
# replaces its stdout and stderr with a link to a file of the host, or a
# FIFO, then fails so that vigil opens them again for the retry: vigil
# never truncates or writes through them and never hangs; the retry's
# output lands in fresh files of its own.  A private podman serves the
# Docker Engine API.
. "$(dirname "$0")/sec-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
sec_podman_up
victim=$tmp/victim
printf 'original\n' >"$victim"
W=$tmp/w
mkdir "$W"
for how in symlink fifo; do
	cat >"$W/$how.yaml" <<Y
version: 1
name: docker-stdout-$how
backend: docker
image: localhost/vigil-test:latest
retry:
  max: 1
command: |
  if [ "\$VIGIL_ATTEMPT" = 1 ]; then
    cd "\$VIGIL_TASK_DIR"
    rm -f stdout stderr
    case $how in
    symlink) ln -s $victim stdout; ln -s $victim stderr ;;
    fifo) mkfifo stdout stderr ;;
    esac
    exit 1
  fi
  echo second-attempt
Y
	( cd "$W" && timeout 120 "$VIGIL" run "$W/$how.yaml" \
	    >"$W/$how.out" 2>&1 )
	rc=$?
	[ $rc -eq 124 ] && fail "$how: vigil hung on what the task left"
	expect "$(cat "$victim")" original "$how: the victim file"
	expect "$rc" 0 "$how: the retry's exit status ($(cat "$W/$how.out"))"
	id=$(sed -n 's/^vigil: run \([0-9a-f-]*\): .*/\1/p' "$W/$how.out" |
	    head -1)
	# Without the attempt headers vigil logs puts between attempts.
	out=$("$VIGIL" logs "$id/0" 2>&1 | grep -v '^--- attempt ')
	expect "$out" second-attempt "$how: the retry's output"
done
echo "s0105: ok"

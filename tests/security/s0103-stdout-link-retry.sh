#!/bin/sh
# A task replaces its stdout and stderr with a link to a file of the
# host (here the audit log of a policy file's run), a hard link, or a
# FIFO, then fails so that vigil opens them again for the retry: vigil
# never appends through them and never hangs.
. "$(dirname "$0")/sec-lib.sh"
victim=$tmp/victim
printf 'original\n' >"$victim"
W=$tmp/w
mkdir "$W"
for how in symlink hardlink fifo; do
	cat >"$W/$how.yaml" <<Y
version: 1
name: stdout-$how
retry:
  max: 1
command: |
  if [ "\$VIGIL_ATTEMPT" = 1 ]; then
    cd "\$VIGIL_TASK_DIR"
    rm -f stdout stderr
    case $how in
    symlink) ln -s $victim stdout; ln -s $victim stderr ;;
    hardlink) ln $victim stdout 2>/dev/null || ln -s $victim stdout ;;
    fifo) mkfifo stdout stderr ;;
    esac
    exit 1
  fi
  echo '{"forged":"record"}'
  echo pwned >&2
Y
	( cd "$W" && timeout 60 "$VIGIL" run -q "$W/$how.yaml" >/dev/null 2>&1 )
	[ $? -eq 124 ] && fail "$how: vigil hung on what the task left"
	expect "$(cat "$victim")" original "$how: the victim file"
done
echo "s0103: ok"

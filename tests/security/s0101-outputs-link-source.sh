#!/bin/sh
# A task links what it cannot read (strict hides /root-like trees) into
# its task and scratch directories and names it as an output; vigil runs
# as root and could read it.  A link in any component, the last or a
# middle one, is never collected: the secret never reaches the outputs
# (which the task's next attempt could read) and is listed as skipped.
. "$(dirname "$0")/sec-lib.sh"
hidden=$tmp/hidden
mkdir -m 700 "$hidden"
echo "TOP-SECRET-$$" >"$hidden/secret.csv"
W=$tmp/w
mkdir "$W"
cat >"$W/m.yaml" <<Y
version: 1
name: link-source
isolation:
  level: strict
retry:
  max: 1
outputs: ["*.csv", "d/*", "sc/*"]
command: |
  if [ "\$VIGIL_ATTEMPT" = 1 ]; then
    ln -s $hidden/secret.csv last.csv
    ln -s $hidden d
    ln -s $hidden "\$VIGIL_SCRATCH_DIR/sc" 2>/dev/null
    exit 1
  fi
  cat "\$VIGIL_TASK_DIR"/outputs/*.csv "\$VIGIL_TASK_DIR"/outputs/d/* 2>/dev/null
  true
Y
(cd "$W" && "$VIGIL" run -q "$W/m.yaml" >/dev/null 2>&1)
run=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
dir=$("$VIGIL" status "$run" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["dir"])')
grep -rq "TOP-SECRET" "$dir/tasks/0/outputs" 2>/dev/null &&
    fail "the hidden file was copied into the outputs"
"$VIGIL" logs "$run/0" | grep -q "TOP-SECRET" &&
    fail "the task read the hidden file through its outputs"
grep -q '"why":"a symbolic link' "$dir/tasks/0/outputs.json" ||
    fail "links not listed as skipped: $(cat "$dir/tasks/0/outputs.json")"
echo "s0101: ok"

#!/bin/sh
# A task replaces its outputs destination (tasks/<i>/outputs, inside its
# own task directory) with a link to a directory of the host, or to its
# run directory, and leaves a file named like the run's records:
# nothing is written where the link points, manifest.json is intact.
. "$(dirname "$0")/sec-lib.sh"
victim=$tmp/victim
mkdir "$victim"
W=$tmp/w
mkdir "$W"
cat >"$W/m.yaml" <<Y
version: 1
name: link-dest
matrix:
  t: [host, run]
outputs: ["*.json", "*.txt"]
command: |
  cd "\$VIGIL_TASK_DIR"
  echo pwned > pwned.txt
  # The marker is made at run time: the manifest itself never holds it.
  printf '{"version":1,"command":"%s"}\n' "UN\$(echo GATED)" > manifest.json
  if [ "\${{ matrix.t }}" = host ]; then
    ln -s $victim "\$VIGIL_TASK_DIR/outputs"
  else
    ln -s ../.. "\$VIGIL_TASK_DIR/outputs"
  fi
Y
(cd "$W" && "$VIGIL" run -q "$W/m.yaml" >/dev/null 2>&1)
run=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
dir=$("$VIGIL" status "$run" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["dir"])')
[ -z "$(ls -A "$victim")" ] || fail "written through the link: $(ls "$victim")"
[ ! -e "$dir/pwned.txt" ] || fail "written into the run directory"
grep -q "UNGATED" "$dir/manifest.json" && fail "the run's manifest.json was replaced"
"$VIGIL" status "$run" >/dev/null || fail "the run's records are unreadable"
echo "s0102: ok"

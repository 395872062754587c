#!/bin/sh
# vigil pack-exec --manifest-sha256 HEX RUN_DIR PACK ELEMENT outside
# Slurm (VIGIL_SLURM_STEPS=exec: each task a local task-exec process):
# it runs only its element's tasks, each with its attempt and time-out
# from the pack file and its own record; tasks/INDEX/cancel cancels one
# task (before it starts here) while its siblings run; bad arguments and
# pack files are refused with exit 2, naming what is wrong; a manifest
# other than the one submitted runs nothing.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/pe.yaml" <<'Y'
version: 1
name: pe
matrix:
  what: [ok, fail, slow, ok2, skipped]
command: |
  case ${{ matrix.what }} in
  ok|ok2) echo "attempt $VIGIL_ATTEMPT" ;;
  fail) exit 7 ;;
  slow) [ "$VIGIL_ATTEMPT" = 1 ] || sleep 30 ;;
  skipped) echo ran ;;
  esac
timeout: 1m
kill_grace: 1s
Y
"$VIGIL" run -q "$W/pe.yaml" >/dev/null 2>&1
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
dir=$VIGIL_HOME/runs/$id
sum=$(run_digest "$dir")
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$dir/tasks/$1/result.json" "$2"; }
mkdir -p "$dir/slurm"
for t in 0 1 2 3 4; do rm -f "$dir/tasks/$t/result.json" "$dir/tasks/$t/stdout"; done
# Element 1: tasks 0-2 and 4 (attempt 2, task 2 timed out after 3 s,
# task 4 cancelled before it starts); element 0 holds task 3 only.
printf '1 0 2 0 0\n1 1 2 0 0\n1 2 2 3 0\n0 3 1 0 0\n1 4 2 0 0\n' \
    >"$dir/slurm/submit-9.pack"
mkdir -p "$dir/tasks/4" && echo cancel >"$dir/tasks/4/cancel"
pe() { VIGIL_SLURM_STEPS=exec "$VIGIL" pack-exec --manifest-sha256 "$sum" "$@"; }
pe "$dir" submit-9.pack 1 >"$W/out" 2>&1
expect_eq "pack-exec exit ($(cat "$W/out"))" 1 $?
expect_eq "task 0" SUCCEEDED "$(field 0 state)"
expect_eq "task 0 attempt" "attempt 2" "$(tail -n 1 "$dir/tasks/0/stdout")"
expect_eq "task 1" FAILED "$(field 1 state)"
expect_eq "task 1 exit" 7 "$(field 1 exit_code)"
expect_eq "task 2" TIMEOUT "$(field 2 state)"
expect_eq "task 4" CANCELLED "$(field 4 state)"
grep -q ran "$dir/tasks/4/stdout" 2>/dev/null && fail "cancelled task 4 ran"
[ -f "$dir/tasks/3/result.json" ] && fail "task 3 of element 0 ran"
pe "$dir" submit-9.pack 0 >"$W/out" 2>&1
expect_eq "element 0 exit ($(cat "$W/out"))" 0 $?
expect_eq "task 3" SUCCEEDED "$(field 3 state)"

# Refusals, each naming what is wrong.
refused() {
	want=$1; shift
	"$VIGIL" pack-exec "$@" >"$W/out" 2>&1
	rc=$?
	expect_eq "exit of pack-exec $*" 2 "$rc"
	grep -qF -- "$want" "$W/out" || fail "pack-exec $*: no '$want' in: $(cat "$W/out")"
}
refused "ELEMENT must be an array index, not 'x'" --manifest-sha256 "$sum" "$dir" submit-9.pack x
refused "PACK must be a file name in RUN_DIR/slurm, not '../jobs'" --manifest-sha256 "$sum" "$dir" ../jobs 0
refused "submit-8.pack" --manifest-sha256 "$sum" "$dir" submit-8.pack 0
refused "pack file: no task for element 5" --manifest-sha256 "$sum" "$dir" submit-9.pack 5
printf '0 1 1 0 0; touch /tmp/x\n' >"$dir/slurm/bad.pack"
refused "pack file line 1: not 'ELEMENT INDEX ATTEMPT TIMEOUT MEMORY'" --manifest-sha256 "$sum" "$dir" bad.pack 0
refused "no --manifest-sha256" "$dir" submit-9.pack 0
"$VIGIL" pack-exec --manifest-sha256 0000 "$dir" submit-9.pack 0 >"$W/out" 2>&1
[ $? -ne 0 ] || fail "another digest ran"
grep -q "is not the manifest this job was submitted with" "$W/out" ||
	fail "another digest: $(cat "$W/out")"
pass

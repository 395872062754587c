# powers-lib.sh - sourced after sec-lib.sh by the s02xx (root's powers)
# and s04xx (the supervisor) tests: runs one task at a confinement level
# and reads back what vigil recorded.
#
# task_run LEVEL COMMAND [YAML]: writes m.yaml (isolation.level LEVEL,
# the command, YAML lines appended under isolation:) and runs it; sets
# rid to the run id.  task_out: the task's stdout.  task_field F: a
# field of the task's status --json (state, exit_code, reason).
task_run() {
	cat >"$tmp/m.yaml" <<Y
version: 1
name: attack
isolation:
  level: $1
${3:-}
command: $2
Y
	timeout 60 "$VIGIL" run "$tmp/m.yaml" >"$tmp/run.out" 2>&1
	rid=$("$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
}
task_out() { "$VIGIL" logs "$rid/0"; }
task_field() {
	"$VIGIL" status "$rid" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["tasks"][0][sys.argv[1]])' "$1"
}
# Compiles the C program in $1 (a file beside this one) into $tmp/$2.
build_attack() {
	command -v cc >/dev/null || skip "no C compiler for the attack program"
	cc -O0 -o "$tmp/$2" "$here/$1" || fail "cannot build $1"
}

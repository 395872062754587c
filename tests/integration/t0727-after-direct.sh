#!/bin/sh
# Dependencies between runs on the direct scheduler: a run submitted with
# --after waits, its task PENDING with the reason `vigil status` shows,
# until the run it names ends; after a run that failed, `ok` can never be
# met and the task ends DEPENDENCY_NEVER_SATISFIED without running, while
# `notok` runs; after: in the manifest, by name with a condition; a run
# that does not exist and a bad condition are refused before anything is
# recorded.
set -u
W=$(mktemp -d /tmp/vigil-after-it-XXXXXX)
VIGIL_HOME=$W/home
export VIGIL_HOME
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; }
jq_run() { "$VIGIL" status "$1" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }

cat >"$W/prep.yaml" <<Y
version: 1
name: prep
isolation: {level: none}
command: sleep 3; date +%s.%N >"$W/prep.end"
Y
cat >"$W/next.yaml" <<Y
version: 1
name: next
isolation: {level: none}
command: date +%s.%N >"$W/next.start"
Y
a=$("$VIGIL" submit "$W/prep.yaml") || fail "submit prep"
b=$("$VIGIL" submit "$W/next.yaml" --after prep) || fail "submit next"
sleep 1
expect_eq "waiting state" PENDING "$(jq_run "$b" 'd["tasks"][0]["state"]')"
expect_eq "waiting reason" \
    "waiting for run $a (prep) to end (after ok); it is RUNNING" \
    "$(jq_run "$b" 'd["tasks"][0]["reason"]')"
"$VIGIL" status "$b" | grep -q "waiting for run $a (prep)" ||
	fail "status does not say what $b waits for: $("$VIGIL" status "$b")"
i=0
until [ "$(jq_run "$b" 'd["state"]')" = SUCCEEDED ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "next never ran: $("$VIGIL" status "$b")"
	sleep 0.2
done
python3 -c "import sys; sys.exit(0 if float(open('$W/next.start').read()) >= float(open('$W/prep.end').read()) else 1)" ||
	fail "next started before prep ended"

cat >"$W/bad.yaml" <<Y
version: 1
name: broken
isolation: {level: none}
command: exit 3
Y
"$VIGIL" run -q "$W/bad.yaml" >/dev/null 2>&1
bad=$("$VIGIL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
cat >"$W/never.yaml" <<Y
version: 1
name: never
isolation: {level: none}
command: touch "$W/never.ran"
Y
"$VIGIL" run -q "$W/never.yaml" --after broken >"$W/out" 2>&1
expect_eq "exit status after a failed run" 1 $?
c=$("$VIGIL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
expect_eq "never state" DEPENDENCY_NEVER_SATISFIED "$(jq_run "$c" 'd["tasks"][0]["state"]')"
expect_eq "never reason" "run $bad (broken) ended FAILED; after ok can never be met" \
    "$(jq_run "$c" 'd["tasks"][0]["reason"]')"
expect_eq "never attempts" 0 "$(jq_run "$c" 'd["tasks"][0]["attempts"]')"
[ -e "$W/never.ran" ] && fail "the task ran"
"$VIGIL" run -q "$W/never.yaml" --after "broken:notok" >"$W/out" 2>&1 ||
	fail "after notok: $(cat "$W/out")"
[ -e "$W/never.ran" ] || fail "after notok: the task did not run"

cat >"$W/m.yaml" <<Y
version: 1
name: by-manifest
after:
  - {run: broken, when: any}
  - $a
command: "true"
Y
"$VIGIL" run -q "$W/m.yaml" >"$W/out" 2>&1 || fail "after: in the manifest: $(cat "$W/out")"

n=$("$VIGIL" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
"$VIGIL" run -q "$W/next.yaml" --after nosuch >"$W/out" 2>&1
expect_eq "unknown run exit status" 2 $?
expect_eq "unknown run message" "vigil: after: no run has the id or name 'nosuch'" "$(cat "$W/out")"
"$VIGIL" submit "$W/next.yaml" --after prep:maybe >"$W/out" 2>&1
expect_eq "bad condition exit status" 2 $?
expect_eq "bad condition message" "vigil: --after: bad condition in 'prep:maybe' (valid: ok, any, notok)" "$(cat "$W/out")"
expect_eq "runs recorded" "$n" "$("$VIGIL" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')"
printf 'version: 1\nname: x\nafter:\n  - {run: prep, when: later}\ncommand: "true"\n' >"$W/x.yaml"
"$VIGIL" validate "$W/x.yaml" >"$W/out" 2>&1
expect_eq "bad when exit status" 2 $?
expect_eq "bad when message" "$W/x.yaml:4:23: error: 'after[0].when' must be ok, any or notok
    4 |   - {run: prep, when: later}
      |                       ^" "$(cat "$W/out")"
echo ok

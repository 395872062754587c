#!/bin/sh
# Hostile manifest values reach Grid Engine as exactly one argument each
# and never a shell: a queue name full of quotes and command
# substitutions goes to qsub as one -q value and comes back in qsub's
# own refusal, whole; the same kind of value as gridengine.options.A
# (the account) is kept by Grid Engine byte for byte; a run directory
# under a VIGIL_HOME with blanks, quotes and $(...) runs its tasks; an
# environment value with a newline reaches the task intact; nothing in
# any of them runs.  A newline in a request is refused when the
# manifest is loaded, naming the field and its place.
set -u
. "$(dirname "$0")/gridengine-lib.sh"

# shellcheck disable=SC2089 # the quotes are the point
VIGIL_HOME="$W/home 'q\" \$(touch $W/pwned0) \`touch $W/pwned1\`"
# shellcheck disable=SC2090
export VIGIL_HOME
# sq V: V for a YAML single-quoted scalar
sq() { printf '%s' "$1" | sed "s/'/''/g"; }
bad="q'\"\$(touch\${IFS}$W/pwned2)\`touch\${IFS}$W/pwned3\`;#\$"
cat >"$W/h.yaml" <<Y
version: 1
name: hostile
scheduler: gridengine
resources:
  partition: '$(sq "$bad")'
gridengine:
  poll_min: 1s
command: "true"
Y
"$VIGIL" run -q "$W/h.yaml" >"$W/out" 2>&1
expect_eq "exit status: $(cat "$W/out")" 1 $?
id=$(last_run)
expect_eq "state" BACKEND_ERROR "$(states "$id")"
reason=$(jq_run "$id" 'd["tasks"][0]["reason"]')
case "$reason" in
"'qsub' exited 1: "*"$bad"*) ;;
*) fail "reason: $reason" ;;
esac

# Grid Engine refuses '/' in an account: the substitutions touch names
# relative to where a shell would run them (here, or the job's home).
cd "$W" || fail "cd"
val="a'b\"c\$(touch\${IFS}pwned4)\`touch\${IFS}pwned5\`"
cat >"$W/o.yaml" <<Y
version: 1
name: hostile-option
scheduler: gridengine
env:
  HOSTILE: "x\\ny \$(touch $W/pwned6) '\\""
isolation:
  writable: ["$W"]
gridengine:
  poll_min: 1s
  options:
    A: '$(sq "$val")'
command: printf '%s' "\$HOSTILE" >$W/env
Y
"$VIGIL" run -q "$W/o.yaml" >"$W/out" 2>&1 || fail "option run: $(cat "$W/out") $("$VIGIL" status "$(last_run)")"
id=$(last_run)
expect_eq "option state" SUCCEEDED "$(states "$id")"
handle=$(jq_run "$id" 'd["tasks"][0]["job_id"]')
expect_eq "account as Grid Engine keeps it" "$val" \
    "$(qacct_get "${handle%%.*}" 1 account)"
expect_eq "env" "x
y \$(touch $W/pwned6) '\"" "$(cat "$W/env")"
for n in 0 1 2 3 4 5 6; do
	[ -e "$W/pwned$n" ] && fail "pwned$n: something ran"
	[ -e "$HOME/pwned$n" ] && fail "$HOME/pwned$n: something ran"
done

printf 'version: 1\nname: nl\nscheduler: gridengine\nresources:\n  partition: "a\\nb"\ncommand: "true"\n' >"$W/n.yaml"
"$VIGIL" run -q "$W/n.yaml" >"$W/out" 2>&1
rc=$?
expect_eq "newline exit status: $(cat "$W/out")" 2 $rc
expect_eq "newline message" "$W/n.yaml:5:14: error: 'resources.partition' holds a control character (byte 0x0a at offset 1): only printable characters are valid
    5 |   partition: \"a\\nb\"
      |              ^" \
    "$(cat "$W/out")"
pass

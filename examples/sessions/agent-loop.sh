#!/bin/sh
# agent-loop.sh - how an agent framework drives a vigil session as its
# terminal tool: one session per agent task, each tool call one `vigil
# exec --session ID --json -- CMD` whose JSON object (exit_code, stdout,
# stderr, duration, truncated) goes back to the model; a server in the
# background read later; the session stopped at the end.  Here the
# "model" is a fixed list of commands; the session is local (a confined
# directory), `--backend docker --image REF` or `-f session.yaml` give the
# same loop in a container, over ssh or in a cloud sandbox.
#
#   VIGIL=build/release/vigil sh examples/sessions/agent-loop.sh
set -eu
VIGIL=${VIGIL:-vigil}

# One session per agent task; it ends by itself after 10 idle minutes
# or 2 hours, even if this script is killed.
sid=$("$VIGIL" session start --name "agent-$$" --idle-timeout 10m \
    --max-age 2h --mode auto-deny)
trap '"$VIGIL" session stop "$sid" >/dev/null' EXIT

# The terminal tool: one command in, one JSON object out.  A denied
# command exits 3 with {"denied": true, "reason": ...}, which the model
# sees like any other result.
terminal() {
	"$VIGIL" exec --session "$sid" --json --timeout 60 -- "$1" || true
}

for cmd in \
    'mkdir -p project && cd project && printf "print(6 * 7)\n" >main.py' \
    'export GREETING=hello; ls' \
    'echo "$GREETING from $(pwd)"' \
    'rm -rf /' \
    'seq 1 100000 | tail -n 1'; do
	printf '> %s\n' "$cmd"
	terminal "$cmd"
done

# A long-running job in the background, its output read while it runs.
job=$("$VIGIL" exec --session "$sid" --background -- \
    'for i in 1 2 3; do echo "tick $i"; sleep 0.2; done')
"$VIGIL" session output "$sid" "$job" --follow

# A background job that takes input while it runs (a REPL, a server's
# console): its stdin stays open until the input is closed.
job=$("$VIGIL" exec --session "$sid" --background --open-stdin -- \
    'while read -r line; do echo "read: $line"; done; echo "input closed"')
"$VIGIL" session input "$sid" "$job" "first line
"
"$VIGIL" session input "$sid" "$job" --close "second line
"
"$VIGIL" session output "$sid" "$job" --wait
"$VIGIL" session jobs "$sid"

#!/bin/sh
# Docker accounting against a real podman service: `vigil run` of a task
# whose use is known (200 MB held, 1 s of user CPU spun by the shell)
# records CPU time and peak memory sampled from GET
# /containers/ID/stats while the container runs, with what the attempt
# was given; `vigil status` shows them.  The stats of the exited
# container are empty (podman 4.3), which is why vigil samples.
. "$(dirname "$0")/docker-lib.sh"
W=$tmp/w
mkdir -p "$W"
VIGIL_HOME=$W/home
export VIGIL_HOME

# The shell spins until its own user CPU time reaches 1 s (the `times`
# builtin, no fork), while tail holds the 200 MB head wrote into it.
cat >"$W/known.yaml" <<'Y'
version: 1
name: known-docker
backend: docker
image: localhost/vigil-test:latest
resources: { cpus: 1, memory: 1G }
command: |
  spin() {
    while :; do
      i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done
      times >/tmp/t; read u s </tmp/t; u=${u#*m}; u=${u%s}
      case $u in 0.*) ;; *) break ;; esac
    done
  }
  { head -c 209715200 /dev/zero; spin; } | tail -c 209715200 >/dev/null
Y
if ! "$VIGIL" run "$W/known.yaml" >/dev/null 2>"$W/known.err"; then
	echo "FAIL: known task: $(cat "$W/known.err")"
	exit 1
fi
grep -Eq '^vigil: cpu [0-9]+% of requested, peak memory 2[0-9][0-9]M of 1G asked \([0-9]+%\)$' \
    "$W/known.err" && echo "ok: efficiency line" ||
    { echo "FAIL: efficiency line: $(cat "$W/known.err")"; fail=1; }
"$VIGIL" status last --json >"$W/known.json"
# The shell's own second, plus what head and tail spent moving 200 MB;
# sampling misses at most the last interval (0.1 s this early).
if python3 "$top/tests/data/known-usage.py" "$W/known.json" --cpu 0.9:6 \
    --given 1:1073741824 --mem-eff 0.19:0.32
then echo "ok: usage of the known task"
else fail=1
fi
"$VIGIL" status last/0 >"$W/attempt" 2>&1
grep -Eq 'cpu [0-9.]+s \(user [0-9.]+, sys [0-9.]+\).*peak 2[0-9][0-9]M of 1G  1 cpu' \
    "$W/attempt" && echo "ok: attempt line" ||
    { echo "FAIL: attempt line: $(cat "$W/attempt")"; fail=1; }

# What the engine says of an exited container: nothing (an empty body),
# so a sample after the wait could never have worked.
id=$(api POST /v1.41/containers/create -H 'Content-Type: application/json' \
    -d '{"Image":"localhost/vigil-test:latest","Cmd":["true"]}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Id"])')
api POST "/v1.41/containers/$id/start" >/dev/null
api POST "/v1.41/containers/$id/wait" >/dev/null
body=$(api GET "/v1.41/containers/$id/stats?stream=false&one-shot=true")
api DELETE "/v1.41/containers/$id?force=1" >/dev/null
check "stats of an exited container" "$(printf '%s' "$body" | tr -d ' \n')" ""
exit $fail

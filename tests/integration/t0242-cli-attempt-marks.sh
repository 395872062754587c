#!/bin/sh
# The attempts of a retried task are told apart wherever its output is
# shown: vigil logs (files and output: stream, stdout and stderr), the
# --cron summary (both too), the webhook's stderr_tail and the report's failures
# each put a header line before each attempt's part:
#   --- attempt N of M, started TIME, exit CODE ---
# A task that ran once shows its output as it is.
set -u
. "$(dirname "$0")/engine-lib.sh"
XDG_CONFIG_HOME=$W/cfg
export XDG_CONFIG_HOME
mkdir -p "$W/cfg/vigil" "$W/r"
printf 'notify:\n  allow_private: true\n' >"$W/cfg/vigil/config.yaml"
python3 "$(dirname "$0")/notify-recv.py" "$W/port" "$W/r" ok &
rpid=$!
trap 'kill $rpid 2>/dev/null; rm -rf "$W"' EXIT INT TERM
i=0
while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
[ -s "$W/port" ] || fail "receiver did not start"
PORT=$(cat "$W/port")

# flaky fails twice, then succeeds; bad fails every time; once succeeds
# at once.  A counter file per task in the workdir.
manifest() {
	cat >"$W/$1.yaml" <<Y
version: 1
name: $1
$2
matrix:
  t: [flaky, bad, once]
retry:
  max: 2
  backoff: 0
isolation:
  writable: ["$W"]
notify:
  webhook:
    - url: http://127.0.0.1:$PORT/
command: |
  f=$1-\${{ matrix.t }}
  n=\$(cat \$f 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >\$f
  echo "out \${{ matrix.t }} \$n"; echo "err \${{ matrix.t }} \$n" >&2
  case \${{ matrix.t }} in
  flaky) [ \$n -ge 3 ] ;;
  bad) exit 4 ;;
  esac
Y
}
last_id() {
	"$VIGIL" status --json last | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["id"])'
}
# Replaces the times of headers with T, for comparison.
untime() { sed 's/, started [0-9-]* [0-9:]*, /, started T, /'; }

manifest files ""
(cd "$W" && "$VIGIL" run --cron "$W/files.yaml") >"$W/o" 2>"$W/e"
expect_eq "run exit" 1 $?
id=$(last_id)
grep -Eq -- "^    \| --- attempt 1 of 3, started [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}, exit 4 ---$" \
    "$W/e" || fail "no dated header: $(cat "$W/e")"

# vigil logs: each attempt under its header, stdout and stderr.
expect_eq "logs flaky" "--- attempt 1 of 3, started T, exit 1 ---
out flaky 1
--- attempt 2 of 3, started T, exit 1 ---
out flaky 2
--- attempt 3 of 3, started T, exit 0 ---
out flaky 3" "$("$VIGIL" logs "$id/0" | untime)"
expect_eq "logs bad stderr" "--- attempt 1 of 3, started T, exit 4 ---
err bad 1
--- attempt 2 of 3, started T, exit 4 ---
err bad 2
--- attempt 3 of 3, started T, exit 4 ---
err bad 3" "$("$VIGIL" logs "$id/1" --stderr | untime)"
expect_eq "logs once: no header" "out once 1" "$("$VIGIL" logs "$id/2")"
"$VIGIL" logs "$id" | untime >"$W/all"
grep -qx -- "--- attempt 2 of 3, started T, exit 4 ---" "$W/all" ||
    fail "logs RUN: $(cat "$W/all")"

# The --cron summary: the failed task's tail, per attempt.
expect_eq "cron summary" "  task 1 [t=bad] FAILED, exit 4: exit status 4
    | --- attempt 1 of 3, started T, exit 4 ---
    | err bad 1
    | --- attempt 2 of 3, started T, exit 4 ---
    | err bad 2
    | --- attempt 3 of 3, started T, exit 4 ---
    | err bad 3" "$(grep -A 7 '^  task 1 ' "$W/e" | untime)"

# The webhook's stderr_tail.
i=0
while [ ! -s "$W/r/1.json" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
python3 - "$W/r/1.json" <<'PY' || fail "webhook payload: $(cat "$W/r/1.json")"
import json, re, sys
p = json.loads(json.load(open(sys.argv[1]))["body"])
t = [f for f in p["failed"] if f["index"] == 1][0]
tail = [re.sub(r", started [0-9-]+ [0-9:]+, ", ", started T, ", l)
        for l in t["stderr_tail"]]
assert tail == ["--- attempt 1 of 3, started T, exit 4 ---", "err bad 1",
                "--- attempt 2 of 3, started T, exit 4 ---", "err bad 2",
                "--- attempt 3 of 3, started T, exit 4 ---", "err bad 3"], tail
PY

# The report's failures.
"$VIGIL" report -o "$W/rep.html" "$id" || fail "report"
python3 - "$W/rep.html" <<'PY' || fail "report failures"
import json, re, sys
html = open(sys.argv[1]).read()
want = ("--- attempt 1 of 3, started T, exit 4 ---\nerr bad 1\n"
        "--- attempt 2 of 3, started T, exit 4 ---\nerr bad 2\n"
        "--- attempt 3 of 3, started T, exit 4 ---\nerr bad 3\n")
for m in re.finditer(r'"stderr_tail":("(?:[^"\\]|\\.)*")', html):
    got = re.sub(r", started [0-9-]+ [0-9:]+, ", ", started T, ",
                 json.loads(m.group(1)))
    if got == want:
        sys.exit(0)
sys.exit("no failure with the marked tail")
PY

# output: stream: logs and the cron summary mark the attempts from the
# frames.
manifest stream "output: stream"
(cd "$W" && "$VIGIL" run --cron "$W/stream.yaml") 2>"$W/se"
sid=$(last_id)
expect_eq "stream cron summary" "  task 1 [t=bad] FAILED, exit 4: exit status 4
    | --- attempt 1 of 3, started T, exit 4 ---
    | err bad 1
    | --- attempt 2 of 3, started T, exit 4 ---
    | err bad 2
    | --- attempt 3 of 3, started T, exit 4 ---
    | err bad 3" "$(grep -A 7 '^  task 1 ' "$W/se" | untime)"
expect_eq "stream logs flaky" "--- attempt 1 of 3, started T, exit 1 ---
out flaky 1
--- attempt 2 of 3, started T, exit 1 ---
out flaky 2
--- attempt 3 of 3, started T, exit 0 ---
out flaky 3" "$("$VIGIL" logs "$sid/0" | untime)"
expect_eq "stream logs once" "out once 1" "$("$VIGIL" logs "$sid/2")"

# A timeout says so in its header.
cat >"$W/to.yaml" <<Y
version: 1
retry:
  max: 1
  backoff: 0
  on: [timeout]
timeout: 1s
kill_grace: 1s
command: echo "try \$VIGIL_ATTEMPT"; sleep 30
Y
"$VIGIL" run -q "$W/to.yaml" 2>/dev/null
expect_eq "timeout exit" 1 $?
"$VIGIL" logs last | untime >"$W/to"
grep -Eq -- "^--- attempt 2 of 2, started T, signal [0-9]+, TIMEOUT: timed out after 1s ---$" \
    "$W/to" || fail "timeout header: $(cat "$W/to")"
pass

#!/bin/sh
# t0312-local-downgrade: what a host cannot deliver is recorded, shown
# and, with isolation.required, refused.  Run as nobody, for whom no
# cgroup is writable: a run asking for limits.pids runs without it, warns
# on stderr, and `vigil status RUN` shows the downgrade; the same
# manifest with isolation.required: true ends FAILED before any task
# starts: each task BACKEND_ERROR with the reason, no attempt, exit 1.
set -u
. "$(dirname "$0")/engine-lib.sh"
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || {
	echo "needs root and setpriv to run as nobody"; exit 77; }
chmod 755 "$W"
cp "$VIGIL" "$W/vigil"
cp "$(dirname "$VIGIL")/vigil-shim" "$W/vigil-shim"
# nobody's own home (vigil adopts no directory others can change)
mkdir -m 755 "$W/nb"
chown 65534:65534 "$W/nb"
nb() {
	HOME=$W/nb VIGIL_HOME=$W/nb/home XDG_CONFIG_HOME=$W/nb \
	    setpriv --reuid=65534 --regid=65534 --clear-groups "$W/vigil" "$@"
}
last_run() {
	nb status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'
}
cat >"$W/m.yaml" <<'Y'
version: 1
name: dg
command: ["true"]
limits:
  pids: 50
Y
{ cat "$W/m.yaml"; printf 'isolation:\n  required: true\n'; } >"$W/r.yaml"
chmod 644 "$W/m.yaml" "$W/r.yaml"

nb run "$W/m.yaml" >/dev/null 2>"$W/err"
expect_eq "downgraded run exit" 0 $?
grep -q "^vigil: warning: run .*: isolation downgraded: no cgroup pids limit (" \
    "$W/err" || fail "no warning: $(cat "$W/err")"
id=$(last_run)
nb status "$id" >"$W/st"
grep -q "^isolation downgraded: no cgroup pids limit (.*not writable" \
    "$W/st" || fail "status: $(cat "$W/st")"
expect_eq "state" "SUCCEEDED" "$(nb status "$id" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["state"])')"

nb run "$W/r.yaml" >/dev/null 2>"$W/err"
expect_eq "refused run exit" 1 $?
grep -q "/0 \[-\] BACKEND_ERROR: cgroup limits are required (isolation.required) but this host cannot deliver them: no cgroup pids limit (" \
    "$W/err" || fail "refusal: $(cat "$W/err")"
id=$(last_run)
nb status "$id" --json >"$W/st.json"
python3 - "$W/st.json" <<'P' || fail "refused run's status: $(cat "$W/st.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "FAILED", d["state"]
t = d["tasks"][0]
assert t["state"] == "BACKEND_ERROR" and t["attempts"] == 0, t
assert t["reason"].startswith("cgroup limits are required (isolation.required)"), t
P
pass

# engine-lib.sh - sourced by the t02xx tests: a private VIGIL_HOME and
# work dir removed on exit, and small assertion helpers.
W=$(mktemp -d /tmp/vigil-it-XXXXXX)
VIGIL_HOME=$W/home
export VIGIL_HOME
trap 'rm -rf "$W"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; }
pass() { echo "ok"; exit 0; }
# The id of the newest run.
last_run() { "$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'; }
# Field of the JSON status of run $1: python expression on d.
jq_run() { "$VIGIL" status "$1" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }
# run_digest DIR: the digest a job passes to task-exec and pack-exec
# (--manifest-sha256): SHA-256 of DIR/manifest.json, a NUL, origin.json.
run_digest() { python3 -c 'import hashlib,sys
d=open(sys.argv[1],"rb").read()+b"\0"+open(sys.argv[2],"rb").read()
print(hashlib.sha256(d).hexdigest())' "$1/manifest.json" "$1/origin.json"; }
# Live (non-zombie) processes carrying VIGIL_RUN_ID=$1 in their environment.
run_procs() {
	n=0
	for f in /proc/[0-9]*/environ; do
		p=${f#/proc/}; p=${p%/environ}
		{ tr '\0' '\n' <"$f"; } 2>/dev/null |
		    grep -qx "VIGIL_RUN_ID=$1" || continue
		grep -q '^State:.*Z' /proc/$p/status 2>/dev/null && continue
		n=$((n + 1))
	done
	echo $n
}

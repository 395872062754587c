#!/bin/sh
# t0610-docker-session.sh - agent sessions on the docker backend against
# podman's Engine API: one container per session kept running, each
# command an exec in it (POST /containers/ID/exec, /exec/ID/start, the
# exit code from /exec/ID/json); the checks of session-lib.sh, with
# "gone" meaning the engine knows no container of the session.
. "$(dirname "$0")/docker-lib.sh"
cleanup_extra=sessions_down
. "$here/session-lib.sh"
cd "$tmp" || exit 1

sess_start() {
	"$VIGIL" session start --backend docker --image localhost/vigil-test "$@"
}
sb_gone() {
	n=$(vigil_containers | while read -r c; do
		api GET "/v1.41/containers/$c/json" |
		    grep -q "\"vigil.owner\":\"session:$1\"" && echo "$c"
	done | wc -l)
	[ "$n" -eq 0 ]
}
container_of() {
	sqlite3 -cmd ".timeout 5000" "$VIGIL_HOME/vigil.db" \
	    "select handle from sessions where id = '$1'" | cut -d/ -f2
}

session_suite

# One container for the whole session, running between commands.
id=$(sess_start) || fail "start"
c=$(container_of "$id")
x "$id" -- 'echo $$ >/dev/null' || fail "exec"
api GET "/v1.41/containers/$c/json" | grep -q '"Running":true' ||
    fail "the session's container is not running between commands"
[ "$(vigil_containers | wc -l)" -eq 1 ] || fail "one container per session"
# The first directory is the session's work dir, bound at its host path.
out=$(x "$id" -- 'pwd; echo made >f')
[ "$out" = "$VIGIL_HOME/sessions/$id/work" ] || fail "first cwd: $out"
[ "$(cat "$VIGIL_HOME/sessions/$id/work/f")" = made ] || fail "work dir bound"
# Options from a manifest and --set are validated like a manifest's.
printf 'backend: docker\nimage: localhost/vigil-test\ndocker:\n  pull: sometimes\n' >bad.yaml
"$VIGIL" session start -f bad.yaml 2>err.txt; [ $? -eq 2 ] || fail "bad docker section"
grep -q "bad.yaml:4:" err.txt || fail "bad section message: $(cat err.txt)"
"$VIGIL" session start --backend docker 2>err.txt; [ $? -eq 2 ] || fail "no image"
grep -q "needs an 'image'" err.txt || fail "no image message: $(cat err.txt)"
"$VIGIL" session stop "$id" >/dev/null
[ $fail -eq 0 ] || exit 1
echo "all passed"

#!/bin/sh
# A run's tasks start where the run was made, whoever starts them later:
# vigil retry --failed, vigil resume (after kill -9), a retried --after
# run and task-exec all run them in the run's working directory with
# the caller's environment as it was (TZ here), whatever the current
# directory and environment are; a working directory that is gone or
# was replaced stops them with an error naming it.
set -u
. "$(dirname "$0")/engine-lib.sh"

A=$W/a
mkdir -p "$A" "$W/elsewhere"
echo "from a" >"$A/input.txt"
echo "not a" >"$W/elsewhere/input.txt"
cat >"$W/o.yaml" <<'Y'
version: 1
name: origin
command: |
  cat input.txt
  pwd
  echo "tz=$TZ"
  [ -e go ] || exit 3
Y
last_id() {
	"$VIGIL" status --json last | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["id"])'
}
state() { jq_run "$1" 'd["state"]'; }

# Made in A with TZ=Origin0; fails (no go file).
(cd "$A" && TZ=Origin0 "$VIGIL" run -q "$W/o.yaml")
expect_eq "first run exit" 1 $?
id=$(last_id)
dir=$VIGIL_HOME/runs/$id
expect_eq "first run state" FAILED "$(state "$id")"
expect_eq "recorded workdir" "$A" "$(jq_run "$id" 'd["workdir"]')"
"$VIGIL" status "$id" | grep -qx "workdir: $A" ||
    fail "status: $("$VIGIL" status "$id")"
python3 -c 'import json,sys; o=json.load(open(sys.argv[1]));
assert o["env"]["TZ"] == "Origin0", o' "$dir/origin.json" ||
    fail "origin.json: $(cat "$dir/origin.json")"

# retry --failed from elsewhere, another TZ: runs in A with TZ=Origin0.
touch "$A/go"
(cd "$W/elsewhere" && TZ=Else0 "$VIGIL" retry -q "$id" --failed)
expect_eq "retry exit" 0 $?
expect_eq "retry state" SUCCEEDED "$(state "$id")"
out=$(tail -n 3 "$dir/tasks/0/stdout")
expect_eq "retry ran in A" "from a
$A
tz=Origin0" "$out"
grep -q "not a" "$dir/tasks/0/stdout" && fail "a task read elsewhere"

# resume after kill -9, from elsewhere.
cat >"$W/s.yaml" <<'Y'
version: 1
name: slow
command: |
  cat input.txt
  pwd
  [ "$VIGIL_ATTEMPT" = 1 ] && sleep 30
  echo done
Y
(cd "$A" && exec "$VIGIL" run -q "$W/s.yaml") >/dev/null 2>&1 &
vpid=$!
i=0
until sid=$(last_id 2>/dev/null) && [ "$sid" != "$id" ] &&
    [ -s "$VIGIL_HOME/runs/$sid/tasks/0/stdout" ] || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ "$sid" != "$id" ] || fail "the slow run never started"
kill -9 $vpid
wait $vpid 2>/dev/null
expect_eq "after kill -9" INTERRUPTED "$(state "$sid")"
(cd "$W/elsewhere" && "$VIGIL" resume -q "$sid")
expect_eq "resume exit" 0 $?
sout=$VIGIL_HOME/runs/$sid/tasks/0/stdout
expect_eq "resumed attempt ran in A" "from a
$A
done" "$(tail -n 3 "$sout")"
grep -q "not a" "$sout" && fail "the resumed task read elsewhere"

# An --after run waiting on a failed run never starts; both retried
# from elsewhere run in A.
rm -f "$A/go"
(cd "$A" && "$VIGIL" run -q "$W/o.yaml")
pid_=$(last_id)
(cd "$A" && "$VIGIL" run -q --set after="$pid_" --set name=then \
    "$W/o.yaml") 2>/dev/null
aid=$(last_id)
[ "$aid" != "$pid_" ] || fail "no --after run"
expect_eq "--after run waits in vain" DEPENDENCY_NEVER_SATISFIED \
    "$(jq_run "$aid" 'd["tasks"][0]["state"]')"
touch "$A/go"
(cd "$W/elsewhere" && "$VIGIL" retry -q "$pid_" --failed &&
    "$VIGIL" retry -q "$aid" --failed)
expect_eq "--after retry exit" 0 $?
expect_eq "--after run ran in A" "from a
$A" "$(head -n 2 "$VIGIL_HOME/runs/$aid/tasks/0/stdout")"

# task-exec (a Slurm job starts in the run directory): the task runs in A.
sum=$(python3 -c 'import hashlib,sys
d=open(sys.argv[1],"rb").read()+b"\0"+open(sys.argv[2],"rb").read()
print(hashlib.sha256(d).hexdigest())' "$dir/manifest.json" "$dir/origin.json")
(cd "$dir" && TZ=Job0 "$VIGIL" task-exec --manifest-sha256 "$sum" "$dir" 0)
expect_eq "task-exec exit" 0 $?
expect_eq "task-exec ran in A" "from a
$A
tz=Origin0" "$(tail -n 3 "$dir/tasks/0/stdout")"
# A relative RUN_DIR is taken from where task-exec starts.
(cd "$VIGIL_HOME/runs" && "$VIGIL" task-exec --manifest-sha256 "$sum" \
    "$id" 0)
expect_eq "task-exec relative exit" 0 $?
expect_eq "task-exec relative ran in A" "$A" \
    "$(tail -n 2 "$dir/tasks/0/stdout" | head -n 1)"
# origin.json is covered by the digest: a changed one runs nothing.
cp "$dir/origin.json" "$W/origin.good"
sed "s|$A|$W/elsewhere|" "$W/origin.good" >"$dir/origin.json"
(cd "$dir" && "$VIGIL" task-exec --manifest-sha256 "$sum" "$dir" 0) \
    2>"$W/e"
expect_eq "changed origin exit" 4 $?
grep -q "is not the manifest this job was submitted with" "$W/e" ||
    fail "changed origin not told: $(cat "$W/e")"
cp "$W/origin.good" "$dir/origin.json"

# The working directory replaced: by a directory of the user's own (made
# again), the tasks run there; by one another user owns (a link put in
# its place), refused, naming it, and nothing runs.
cat >"$W/r.yaml" <<'Y'
version: 1
command: pwd; exit 1
Y
mkdir "$W/b"
(cd "$W/b" && "$VIGIL" run -q "$W/r.yaml")
rid=$(last_id)
mv "$W/b" "$W/b.old"
mkdir "$W/b"
(cd / && "$VIGIL" retry -q "$rid" --failed)
expect_eq "made-again workdir retry exit" 1 $?
expect_eq "made-again workdir" "$W/b" \
    "$(tail -n 1 "$VIGIL_HOME/runs/$rid/tasks/0/stdout")"
rm -rf "$W/b"
mkdir "$W/other"
chown 65534 "$W/other"
ln -s "$W/other" "$W/b"
(cd / && "$VIGIL" retry -q "$rid" --failed) 2>"$W/e"
expect_eq "replaced workdir exit" 3 $?
grep -q "^vigil: '$W/b', the working directory of run '$rid', is not the directory the run was made in, and vigil does not trust the one there now: " "$W/e" ||
    fail "replaced workdir not told: $(cat "$W/e")"
expect_eq "attempts after the refusal" 2 \
    "$(jq_run "$rid" 'd["tasks"][0]["attempts"]')"

# The working directory is gone: retry, resume and task-exec say so.
(cd "$A" && "$VIGIL" run -q "$W/r.yaml")
gid=$(last_id)
gdir=$VIGIL_HOME/runs/$gid
gsum=$(python3 -c 'import hashlib,sys
d=open(sys.argv[1],"rb").read()+b"\0"+open(sys.argv[2],"rb").read()
print(hashlib.sha256(d).hexdigest())' "$gdir/manifest.json" \
    "$gdir/origin.json")
# And an interrupted run, for resume.
(cd "$A" && exec "$VIGIL" run -q "$W/s.yaml") >/dev/null 2>&1 &
vpid=$!
i=0
until kid=$(last_id 2>/dev/null) && [ "$kid" != "$gid" ] &&
    [ -s "$VIGIL_HOME/runs/$kid/tasks/0/stdout" ] || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ "$kid" != "$gid" ] || fail "the second slow run never started"
kill -9 $vpid
wait $vpid 2>/dev/null
rm -rf "$A"
(cd / && "$VIGIL" resume -q "$kid") 2>"$W/e"
expect_eq "gone workdir resume exit" 2 $?
expect_eq "gone workdir resume msg" \
    "vigil: run '$kid' was made in '$A', which no longer exists" \
    "$(cat "$W/e")"
(cd / && "$VIGIL" retry -q "$gid" --failed) 2>"$W/e"
expect_eq "gone workdir retry exit" 2 $?
expect_eq "gone workdir retry msg" \
    "vigil: run '$gid' was made in '$A', which no longer exists" \
    "$(cat "$W/e")"
(cd "$gdir" && "$VIGIL" task-exec --manifest-sha256 "$gsum" "$gdir" 0) \
    2>"$W/e"
expect_eq "gone workdir task-exec exit" 2 $?
expect_eq "gone workdir task-exec msg" \
    "vigil: run '$gid' was made in '$A', which no longer exists" \
    "$(cat "$W/e")"
"$VIGIL" cancel "$kid" >/dev/null 2>&1
expect_eq "leftover processes" 0 "$(run_procs "$kid")"
pass

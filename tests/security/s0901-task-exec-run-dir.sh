#!/bin/sh
# The run directory is not a source of commands.  On a compute node a
# job runs `vigil task-exec --manifest-sha256 HEX RUN_DIR INDEX`, HEX the
# digest of the manifest its submitter judged (slurmctld keeps the job
# script).  mallory, who can write alice's run directory (a group-shared
# project space), replaces manifest.json with one that runs her command;
# a job of root's is pointed at a run directory mallory made, with a
# digest of her manifest; a job script without a digest.  In none of
# these may her command run: each is refused, saying why.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"

marks=$tmp/marks
mkdir -m 1777 "$marks"
chmod 1777 "$marks"
cat >"$tmp/k.yaml" <<'Y'
version: 1
name: victim
command: echo honest
Y
chmod 644 "$tmp/k.yaml"

# digest DIR: what the submitting vigil puts in the job: the SHA-256 of
# DIR/manifest.json, then a NUL and DIR/origin.json when there is one.
digest() {
	python3 - "$1" <<'P'
import hashlib, os, sys
d = open(sys.argv[1] + "/manifest.json", "rb").read()
o = sys.argv[1] + "/origin.json"
if os.path.exists(o):
    d += b"\0" + open(o, "rb").read()
print(hashlib.sha256(d).hexdigest())
P
}

# evil IN OUT MARK: mallory's manifest: IN with her command, which
# leaves MARK, and the isolation to write it.
evil() {
	python3 - "$1" "$2" "$3" <<'P'
import json, sys
j = json.load(open(sys.argv[1]))
m = j["manifest"]
m["command"] = "touch " + sys.argv[3]
iso = m.setdefault("isolation", {})
iso["writable"] = [sys.argv[3].rsplit("/", 1)[0]]
json.dump(j, open(sys.argv[2], "w"))
P
}

# 1. alice's run directory, shared with her group; mallory rewrites it.
as_alice "$VG" run -q "$tmp/k.yaml" || fail "alice's run failed"
id=$(as_alice "$VG" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
adir=$ALICE_DIR/.vigil/runs/$id
sum=$(digest "$adir")
chmod 711 "$ALICE_DIR" "$ALICE_DIR/.vigil" "$ALICE_DIR/.vigil/runs"
chgrp "$G_SHARE" "$adir" && chmod 2770 "$adir"
evil "$adir/manifest.json" "$tmp/evil.json" "$marks/alice"
chmod 644 "$tmp/evil.json"
as_mallory sh -c "cat '$tmp/evil.json' > '$adir/manifest.json.new' &&
    mv -f '$adir/manifest.json.new' '$adir/manifest.json'" ||
    fail "mallory could not replace the manifest (the attack needs it)"
as_alice "$VG" task-exec --manifest-sha256 "$sum" "$adir" 0 \
    >"$tmp/out1" 2>&1 && fail "alice's job ran a rewritten manifest"
[ ! -e "$marks/alice" ] || fail "mallory's command ran as alice"
grep -q "run directory '$adir' is owned by" "$tmp/out1" ||
    fail "alice's refusal does not say why: $(cat "$tmp/out1")"
# Even were the directory hers alone again, the digest gives it away.
chmod 700 "$adir"
chown "$U_ALICE" "$adir/manifest.json"
as_alice "$VG" task-exec --manifest-sha256 "$sum" "$adir" 0 \
    >"$tmp/out2" 2>&1 && fail "alice's job ran a changed manifest"
[ ! -e "$marks/alice" ] || fail "mallory's command ran as alice"
grep -q "is not the manifest this job was submitted with" "$tmp/out2" ||
    fail "the digest refusal is not told: $(cat "$tmp/out2")"

# 2. root's job at a run directory mallory made, with its own digest.
as_mallory "$VG" run -q "$tmp/k.yaml" || fail "mallory's run failed"
mid=$(as_mallory "$VG" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
chmod 711 "$MALLORY_DIR" "$MALLORY_DIR/.vigil" "$MALLORY_DIR/.vigil/runs"
mdir=$MALLORY_DIR/.vigil/runs/$mid
evil "$mdir/manifest.json" "$tmp/evil2.json" "$marks/root"
chmod 644 "$tmp/evil2.json"
as_mallory sh -c "cat '$tmp/evil2.json' > '$mdir/manifest.json'"
msum=$(digest "$mdir")
"$VG" task-exec --manifest-sha256 "$msum" "$mdir" 0 >"$tmp/out3" 2>&1 &&
    fail "root's job ran a manifest in mallory's run directory"
[ ! -e "$marks/root" ] || fail "mallory's command ran as root"
grep -q "owned by $U_MALLORY (uid $MALLORY_UID)" "$tmp/out3" ||
    fail "root's refusal does not name the owner: $(cat "$tmp/out3")"

# 3. No digest (a job script from before): refused, for root too.
"$VG" run -q "$tmp/k.yaml" || fail "root's run failed"
rid=$("$VG" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
rdir=$VIGIL_HOME/runs/$rid
evil "$rdir/manifest.json" "$rdir/manifest.json.x" "$marks/nodigest"
mv "$rdir/manifest.json.x" "$rdir/manifest.json"
"$VG" task-exec "$rdir" 0 >"$tmp/out4" 2>&1 &&
    fail "a job without a digest ran"
[ ! -e "$marks/nodigest" ] || fail "a manifest without a digest ran"
grep -q "no --manifest-sha256" "$tmp/out4" || fail "not told: $(cat "$tmp/out4")"
echo ok

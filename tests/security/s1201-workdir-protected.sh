#!/bin/sh
# A task may write its run's working directory (isolation standard), but
# nothing in it that runs code later outside the sandbox: a repository's
# .git, shell start-up files, .envrc.  A hostile task run as root tries
# to change a repository's hooks and config in place, to swap .git for
# one of its own (rename, remove, link), to plant a .git and a .bashrc
# where there were none, and to write through a .bashrc link planted
# before the run; none of it reaches what a later `git` or shell would
# run.  A working directory that is a home directory, or holds vigil's
# state directory, is not writable.
. "$(dirname "$0")/sec-lib.sh"

# run DIR SCRIPT: runs `sh SCRIPT` (so the gate does not see the attack)
# with DIR as the working directory; $rc, $out.
run() {
	cat >"$tmp/m.yaml" <<Y
version: 1
name: wd
workdir: $1
command: sh $2
Y
	"$VIGIL" run "$tmp/m.yaml" >"$tmp/out" 2>&1
	rc=$?
	out=$(cat "$tmp/out")
}
snap() { (cd "$1" && find . -printf '%p %s %m\n' | sort && \
    find . -type f -exec sha256sum {} + | sort); }

# (a) a repository: its .git is held read-only, in place.
repo=$tmp/repo
mkdir -p "$repo/.git/hooks" "$repo/.git/objects"
printf '[core]\n\trepositoryformatversion = 0\n' >"$repo/.git/config"
echo 'ref: refs/heads/main' >"$repo/.git/HEAD"
before=$(snap "$repo/.git")
cat >"$tmp/a.sh" <<'S'
echo '[core] fsmonitor = "touch /tmp/pwned-fsmonitor"' >>.git/config
printf '#!/bin/sh\ntouch /tmp/pwned-hook\n' >.git/hooks/post-checkout
chmod +x .git/hooks/post-checkout
rm -f .git/config
ln .git/config stolen-config
mv .git .git-old && mkdir -p .git/hooks && echo planted >.git/config
rm -rf .git
echo result >metrics.csv
exit 0
S
run "$repo" "$tmp/a.sh"
[ "$rc" -eq 0 ] || fail "(a) the run failed: $out"
expect "$(cat "$repo/metrics.csv" 2>/dev/null)" result "(a) the result was not written"
expect "$(snap "$repo/.git")" "$before" "(a) .git changed"
[ ! -e "$repo/.git-old" ] || fail "(a) .git was moved away"
[ ! -e "$repo/stolen-config" ] || fail "(a) a link to .git/config was made"

# (b) no .git, no .bashrc: a task plants them; they are moved aside.
plain=$tmp/plain
mkdir "$plain"
cat >"$tmp/b.sh" <<'S'
mkdir -p .git/hooks
printf '#!/bin/sh\ntouch /tmp/pwned\n' >.git/hooks/post-checkout
echo 'touch /tmp/pwned' >.bashrc
echo 'touch /tmp/pwned' >.envrc
S
run "$plain" "$tmp/b.sh"
for f in .git .bashrc .envrc; do
	[ ! -e "$plain/$f" ] || fail "(b) the planted $f stayed"
	ls -A "$plain" | grep -q "^$f\.vigil-moved\." ||
	    fail "(b) the planted $f was not moved aside: $(ls -A "$plain")"
	echo "$out" | grep -q "moved aside '$f'" ||
	    fail "(b) the end line does not say $f was moved: $out"
done

# (c) a .bashrc link planted before the run: no write grant at all.
linked=$tmp/linked
mkdir "$linked"
echo 'original' >"$tmp/victim"
ln -s "$tmp/victim" "$linked/.bashrc"
cat >"$tmp/c.sh" <<'S'
echo 'touch /tmp/pwned' >>.bashrc
echo result >metrics.csv
S
run "$linked" "$tmp/c.sh"
[ "$rc" -ne 0 ] || fail "(c) the task wrote beside a planted link"
expect "$(cat "$tmp/victim")" original "(c) the victim changed"
[ ! -e "$linked/metrics.csv" ] || fail "(c) the working directory was writable"
echo "$out" | grep -q "'$linked/.bashrc' is a symbolic link, which cannot be held read-only" ||
    fail "(c) no warning says why: $out"

# (d) a home directory is never made writable.
home=$tmp/h
mkdir "$home"
echo 'echo x >notes.txt' >"$tmp/d.sh"
HOME=$home run "$home" "$tmp/d.sh"
[ "$rc" -ne 0 ] || fail "(d) a task wrote a home directory"
[ ! -e "$home/notes.txt" ] || fail "(d) a file appeared in the home directory"
echo "$out" | grep -q "'$home' is your home directory" || fail "(d) $out"
echo "$out" | grep -q "the sandbox refused writing '$home/notes.txt'" ||
    fail "(d) the reason does not name the refusal: $out"
# (e) a working directory that holds vigil's state: a task could forge
# the database.  No grant.
st=$tmp/proj-with-state
mkdir -p "$st"
VIGIL_HOME=$st/state "$VIGIL" status >/dev/null 2>&1
echo 'echo forged >>state/vigil.db' >"$tmp/e.sh"
VIGIL_HOME=$st/state run "$st" "$tmp/e.sh"
[ "$rc" -ne 0 ] || fail "(e) a task wrote vigil's state directory"
echo "$out" | grep -q "'$st' holds vigil's state directory '$st/state' (VIGIL_HOME)" ||
    fail "(e) no warning says why: $out"
# the run itself wrote the database; the task's line is not in it
grep -q forged "$st/state/vigil.db" && fail "(e) the database was forged"
ls /tmp/pwned* >/dev/null 2>&1 && fail "a planted hook ran"
echo ok

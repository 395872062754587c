#!/bin/sh
# t0310-cgroup-doctor: `vigil doctor` reports where task cgroups go and
# which limits (resources.memory, limits.pids) they enforce, checked
# against the kernel's own files; as an unprivileged user nothing is
# writable and each missing limit names what to change.  A manifest
# with both limits validates.
set -u
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
VIGIL_HOME=$tmp/home VIGIL_SITE_CONFIG= VIGIL_USER_CONFIG=
export VIGIL_HOME VIGIL_SITE_CONFIG VIGIL_USER_CONFIG
here=$(cd "$(dirname "$0")/.." && pwd)

out=$("$VIGIL" doctor) || fail "doctor exited $?"
echo "$out" | grep '^cgroup'
v2=$(echo "$out" | grep '^cgroup: ') || fail "no 'cgroup:' line"
mem=$(echo "$out" | grep '^cgroup memory: ') || fail "no 'cgroup memory:' line"
pids=$(echo "$out" | grep '^cgroup pids: ') || fail "no 'cgroup pids:' line"

# Each claim matches the kernel's files.
case $v2 in
"cgroup: v2 at "*", task cgroups under "*", tree kill by "*)
	parent=${v2#*task cgroups under }
	parent=${parent%%, tree kill by *}
	[ -f "$parent/cgroup.procs" ] || fail "'$parent' is not a cgroup"
	[ -w "$parent" ] || fail "'$parent' is not writable" ;;
"cgroup: v2 unusable ("*) ;;
*) fail "bad v2 line: $v2" ;;
esac
case $mem in
"cgroup memory: ok (v1 at "*)
	dir=${mem#cgroup memory: ok (v1 at }
	dir=${dir%%[,;]*}
	[ -f "$dir/memory.limit_in_bytes" ] ||
		fail "'$dir' is not a v1 memory cgroup"
	# Our own v1 memory cgroup, as /proc/self/cgroup says.
	own=$(sed -n 's/^[0-9]*:\([^:]*,\)*memory\(,[^:]*\)*:\(.*\)/\3/p' \
	    /proc/self/cgroup)
	case $dir in *"$own") ;; *) fail "'$dir' is not our cgroup '$own'" ;;
	esac ;;
"cgroup memory: ok (v2 memory.max, memory.swap.max 0)")
	grep -qw memory "$parent/cgroup.controllers" ||
		fail "v2 memory claimed but '$parent' has no memory" ;;
"cgroup memory: missing ("*"): resources.memory is not enforced on the local backend; run vigil in a delegated cgroup of its own"*) ;;
*) fail "bad memory line: $mem" ;;
esac
case $pids in
"cgroup pids: ok (v1 at "*")")
	dir=${pids#cgroup pids: ok (v1 at }
	dir=${dir%)}
	# The root cgroup has no pids.max: check the mount instead.
	mnt=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" &&
	    $(i + 3) ~ /(^|,)pids(,|$)/) print $5 }' /proc/self/mountinfo)
	[ -n "$mnt" ] || fail "no v1 pids mount"
	case $dir in "$mnt"|"$mnt"/*) ;;
	*) fail "'$dir' is not below the v1 pids mount '$mnt'" ;; esac
	[ -f "$dir/cgroup.procs" ] || fail "'$dir' is not a cgroup" ;;
"cgroup pids: ok (v2 pids.max)")
	grep -qw pids "$parent/cgroup.controllers" ||
		fail "v2 pids claimed but '$parent' has no pids" ;;
"cgroup pids: missing ("*"): limits.pids is not enforced on the local backend; "*) ;;
*) fail "bad pids line: $pids" ;;
esac

# As nobody: nothing is writable, and the lines say what to do.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	cp "$VIGIL" "$tmp/vigil"
	chmod 755 "$tmp" "$tmp/vigil"
	out=$(VIGIL_HOME=$tmp/nobody setpriv --reuid=65534 --regid=65534 \
	    --clear-groups "$tmp/vigil" doctor) || fail "doctor as nobody: $?"
	echo "$out" | grep '^cgroup'
	echo "$out" | grep -q '^cgroup: v2 unusable (.*not writable by us)' ||
		echo "$out" | grep -q '^cgroup: v2 unusable (no cgroup2' ||
		fail "as nobody, v2 is not reported unusable"
	for k in memory pids; do
		f=resources.memory
		[ $k = pids ] && f=limits.pids
		echo "$out" | grep -q "^cgroup $k: missing (.*not writable.*): $f is not enforced on the local backend; run vigil in a delegated cgroup of its own (systemd-run --scope -p Delegate=yes vigil ..., or a Slurm step with cgroup/v2), or make the v1 hierarchy writable$" ||
			fail "as nobody, no 'cgroup $k: missing' line"
	done
fi

"$VIGIL" validate "$here/data/manifests/good/limits-cgroup.yaml" \
    >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "limits-cgroup.yaml: $?"; }
echo "t0310: ok"

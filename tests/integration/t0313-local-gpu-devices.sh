#!/bin/sh
# t0313-local-gpu-devices: the sandbox grants a task read-write opens of
# its own GPU node and the shared control nodes, and nothing of another
# task's GPU, through the real Landlock path.  vigil runs in a private
# mount namespace whose /dev is a tmpfs holding the usual nodes (bound
# from the host's) and NVIDIA nodes made with mknod (major 195, as the
# driver uses).  No driver answers them, so an open Landlock allows
# fails with ENXIO and one it refuses with EACCES.  Checked for
# `standard` and `strict`, for a task without gpus (none granted), and
# for isolation.devices (an InfiniBand node granted by a glob).
set -u
. "$(dirname "$0")/engine-lib.sh"
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null || {
	echo "skipped: needs root and unshare for a private /dev"; exit 77; }
"$VIGIL" doctor 2>/dev/null | grep -q '^landlock: ok' || {
	echo "skipped: Landlock is not enabled on this kernel"; exit 77; }

# The probe is inline: under strict the task reads only system trees.
probe='import os, errno, sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_RDWR))
        r = "OPEN"
    except OSError as e:
        r = errno.errorcode[e.errno]
    print(p, r)'
cat >"$W/m.yaml" <<Y
version: 1
name: gpu-devices
matrix:
  i: [0, 1]
resources:
  gpus: 1
command: ["python3", "-c", $(printf '%s' "$probe" | python3 -c \
  'import json,sys; print(json.dumps(sys.stdin.read()))'), "/dev/nvidia0", "/dev/nvidia1",
  "/dev/nvidia2", "/dev/nvidiactl", "/dev/nvidia-uvm",
  "/dev/infiniband/uverbs0", "/dev/null"]
Y

# Runs vigil with "$@" inside a private mount namespace with fake GPUs.
in_fake_dev() {
	unshare -m --propagation private sh -c '
		set -e
		W=$1; shift
		mkdir -p "$W/olddev"
		mount --rbind /dev "$W/olddev"
		mount -t tmpfs -o mode=755 fakedev /dev
		for f in null zero full random urandom tty ptmx; do
			[ -e "$W/olddev/$f" ] || continue
			touch /dev/$f
			mount --bind "$W/olddev/$f" /dev/$f
		done
		mkdir /dev/pts /dev/shm /dev/infiniband
		mount --rbind "$W/olddev/pts" /dev/pts
		mount --rbind "$W/olddev/shm" /dev/shm
		ln -s /proc/self/fd /dev/fd
		for n in 0 1 2; do mknod /dev/nvidia$n c 195 $n; done
		mknod /dev/nvidiactl c 195 255
		mknod /dev/nvidia-uvm c 511 0
		mknod /dev/infiniband/uverbs0 c 231 192
		chmod 666 /dev/nvidia* /dev/infiniband/uverbs0
		exec "$@"' sh "$W" "$@"
}

# Result of probing path in task t of the last run.
probed() {
	awk -v p="$2" '$1 == p { print $2 }' "$W/out.$1"
}
last_run() {
	"$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'
}

check_level() {
	level=$1
	CUDA_VISIBLE_DEVICES=0,1,2 in_fake_dev "$VIGIL" run \
	    --set isolation.level="$level" "$W/m.yaml" >"$W/run.out" 2>&1 ||
	    fail "$level run: $(cat "$W/run.out")"
	dir=$("$VIGIL" status "$(last_run)" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["dir"])')
	for t in 0 1; do
		cp "$dir/tasks/$t/stdout" "$W/out.$t"
	done
	g0=$("$VIGIL" status "$(last_run)" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["tasks"][0]["gpus"])')
	g1=$("$VIGIL" status "$(last_run)" --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["tasks"][1]["gpus"])')
	[ "$g0" != "$g1" ] || fail "$level: both tasks got GPU $g0"
	for t in 0 1; do
		eval g=\$g$t
		for n in 0 1 2; do
			want=EACCES
			[ "$n" = "$g" ] && want=ENXIO
			expect_eq "$level task $t (gpu $g) /dev/nvidia$n" \
			    "$want" "$(probed $t /dev/nvidia$n)"
		done
		expect_eq "$level task $t nvidiactl" ENXIO \
		    "$(probed $t /dev/nvidiactl)"
		expect_eq "$level task $t nvidia-uvm" ENXIO \
		    "$(probed $t /dev/nvidia-uvm)"
		expect_eq "$level task $t uverbs0" EACCES \
		    "$(probed $t /dev/infiniband/uverbs0)"
		expect_eq "$level task $t /dev/null" OPEN \
		    "$(probed $t /dev/null)"
	done
}
check_level standard
check_level strict

# A task without gpus: no GPU node, no control node; CUDA_VISIBLE_DEVICES
# is set empty.  isolation.devices grants the InfiniBand node by a glob.
CUDA_VISIBLE_DEVICES=0,1,2 in_fake_dev "$VIGIL" run \
    --set resources.gpus=0 --set 'isolation.devices=[/dev/infiniband/*]' \
    "$W/m.yaml" >"$W/run.out" 2>&1 || fail "no-gpu run: $(cat "$W/run.out")"
dir=$("$VIGIL" status "$(last_run)" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["dir"])')
cp "$dir/tasks/0/stdout" "$W/out.0"
for p in /dev/nvidia0 /dev/nvidia1 /dev/nvidia2 /dev/nvidiactl \
    /dev/nvidia-uvm; do
	expect_eq "no-gpu task $p" EACCES "$(probed 0 $p)"
done
expect_eq "isolation.devices uverbs0" ENXIO \
    "$(probed 0 /dev/infiniband/uverbs0)"

# Without isolation nothing is confined: the open reaches the (absent)
# driver.
CUDA_VISIBLE_DEVICES=0,1,2 in_fake_dev "$VIGIL" run \
    --set isolation.level=none "$W/m.yaml" >"$W/run.out" 2>&1 ||
    fail "none run: $(cat "$W/run.out")"
dir=$("$VIGIL" status "$(last_run)" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["dir"])')
cp "$dir/tasks/0/stdout" "$W/out.0"
expect_eq "isolation none /dev/nvidia2" ENXIO "$(probed 0 /dev/nvidia2)"

# doctor names the nodes the sandbox grants.
CUDA_VISIBLE_DEVICES=0,1,2 in_fake_dev "$VIGIL" doctor >"$W/doc" 2>&1
grep -q "^pool gpus: 3 nvidia (from CUDA_VISIBLE_DEVICES=0,1,2)" "$W/doc" ||
    fail "doctor pool: $(cat "$W/doc")"
grep -q "^gpu 1: sandbox grants /dev/nvidia1$" "$W/doc" ||
    fail "doctor gpu 1: $(cat "$W/doc")"
grep -q "^gpu shared nodes granted to tasks with gpus: /dev/nvidiactl /dev/nvidia-uvm$" \
    "$W/doc" || fail "doctor shared: $(cat "$W/doc")"
pass

#!/bin/sh
# t0311-cgroup-limits: resources.memory and limits.pids on the local
# backend, end to end through `vigil run`: a task over its memory limit
# is killed by the kernel, recorded OOM with the limit in its reason, and
# retried (retry.on: [oom]) with memory x memory_factor, which succeeds;
# a task that forks past limits.pids gets EAGAIN at exactly the limit;
# no task cgroup is left behind.  Skips only where `vigil doctor` says
# no hierarchy can limit memory or pids.
set -u
. "$(dirname "$0")/engine-lib.sh"

doc=$("$VIGIL" doctor)
case $(echo "$doc" | grep '^cgroup memory: ') in
"cgroup memory: ok"*) ;;
*) echo "no cgroup can limit memory here: $(echo "$doc" | grep '^cgroup memory')"
   exit 77 ;;
esac
echo "$doc" | grep -q '^cgroup pids: ok' || {
	echo "no cgroup can limit pids here"; exit 77; }
# the task cgroups in every hierarchy: none may be left
cgroups() {
	find /sys/fs/cgroup -maxdepth 6 -type d -name "vigil-*$1*" 2>/dev/null
}

cat >"$W/oom.yaml" <<'Y'
version: 1
name: oom
command: ["/usr/bin/python3", "-c", "x = bytearray(160 << 20); x[::4096] = b'1' * len(x[::4096]); print('held', len(x) >> 20, 'MiB')"]
resources:
  memory: 64M
retry:
  max: 1
  on: [oom]
  memory_factor: 4
Y
"$VIGIL" run -q "$W/oom.yaml" >/dev/null 2>"$W/err"
expect_eq "oom run exit" 0 $?
last_run() {
	"$VIGIL" status --json | python3 -c \
	    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])'
}
id=$(last_run)
"$VIGIL" status "$id/0" >"$W/st"
grep -Eq '^  attempt 1  OOM +.*out of memory: 1 process killed at the cgroup memory limit of 64 MiB \(resources.memory\)' \
    "$W/st" || fail "attempt 1 not OOM: $(cat "$W/st")"
grep -Eq '^  attempt 2  SUCCEEDED' "$W/st" || fail "attempt 2: $(cat "$W/st")"
# Under the second attempt's header (vigil logs marks each attempt).
expect_eq "output of the retry" "held 160 MiB" \
    "$("$VIGIL" logs "$id/0" | sed -n '/^--- attempt 2 of 2, .* exit 0 ---$/,$p' |
    tail -n +2)"
expect_eq "cgroups left after the oom run" "" "$(cgroups "$id")"

# No limit asked: no cgroup made, the same program runs.
sed -e '/resources:/d' -e '/memory: 64M/d' "$W/oom.yaml" >"$W/free.yaml"
"$VIGIL" run -q "$W/free.yaml" >/dev/null 2>&1
expect_eq "unlimited run exit" 0 $?

# limits.pids 5: the task's python and 4 children; the 5th fork fails.
cat >"$W/pids.yaml" <<'Y'
version: 1
name: pids
command:
  - /usr/bin/python3
  - -c
  - |
    import os, time
    n = 0
    try:
        for _ in range(20):
            if os.fork() == 0:
                time.sleep(3)
                os._exit(0)
            n += 1
    except BlockingIOError as e:
        print("forks", n, "then errno", e.errno)
limits:
  pids: 5
Y
"$VIGIL" run -q "$W/pids.yaml" >/dev/null 2>&1
expect_eq "pids run exit" 0 $?
pid_id=$(last_run)
expect_eq "forks under limits.pids 5" "forks 4 then errno 11" \
    "$("$VIGIL" logs "$pid_id/0")"
expect_eq "cgroups left after the pids run" "" "$(cgroups "$pid_id")"
pass

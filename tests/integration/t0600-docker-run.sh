#!/bin/sh
# Docker backend against a real podman service: exit codes, stdout and
# stderr kept apart, argv and shell commands, environment, working
# directory, hardening seen from inside, large output, removal, and the
# errors for a missing image and an unreachable engine.
. "$(dirname "$0")/docker-lib.sh"
T=$tmp/task

out=$("$DA" --task-dir "$T" run -c \
	'printf "o1\n"; printf "e1\n" >&2; printf "o2\n"; printf "e2\n" >&2')
check "success line" "$out" "state=SUCCEEDED exit=0 signal=0 reason="
check "stdout" "$(cat "$T/stdout")" "o1
o2"
check "stderr" "$(cat "$T/stderr")" "e1
e2"

out=$("$DA" --task-dir "$T" run -c 'echo bye; exit 4')
check "exit 4" "$out" "state=FAILED exit=4 signal=0 reason=exit code 4"
check "stdout of exit 4" "$(cat "$T/stdout")" "bye"
check "stderr truncated per attempt" "$(cat "$T/stderr")" ""

out=$("$DA" --task-dir "$T" run -- /bin/echo 'a  b' '$HOME' ';')
check "argv command" "$out" "state=SUCCEEDED exit=0 signal=0 reason="
check "argv verbatim" "$(cat "$T/stdout")" 'a  b $HOME ;'

"$DA" --task-dir "$T" --run-id run-7 --index 5 --attempt 2 --env K='v w' \
	run -c 'echo "$VIGIL_RUN_ID $VIGIL_TASK_INDEX $VIGIL_ATTEMPT"
echo "$VIGIL_TASK_DIR"; echo "K=$K"; echo "PATH=$PATH"; pwd; id -u
echo made >"$VIGIL_TASK_DIR/file"' >/dev/null
check "environment and cwd" "$(cat "$T/stdout")" "run-7 5 2
$T
K=v w
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
$T
$(id -u)"
check "task dir bound read-write" "$(cat "$T/file")" "made"

"$DA" --task-dir "$T" --memory 64M --cpus 1 run -c '
grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status
ls /sys/class/net
cat /sys/fs/cgroup/memory/memory.limit_in_bytes
cat /sys/fs/cgroup/pids/pids.max
touch /rootfs-write && echo rootfs writable' >/dev/null
check "hardening" "$(cat "$T/stdout")" "CapEff:	0000000000000000
CapBnd:	0000000000000000
NoNewPrivs:	1
lo
67108864
4096
rootfs writable"

"$DA" --task-dir "$T" --read-only run -c \
	'touch /x 2>/dev/null || echo ro; touch /tmp/y && echo tmp ok' >/dev/null
check "read-only root, writable /tmp" "$(cat "$T/stdout")" "ro
tmp ok"

"$DA" --task-dir "$T" run -c 'head -c 5000000 /dev/zero | tr "\0" x
head -c 300000 /dev/zero | tr "\0" y >&2' >/dev/null
check "5 MB of stdout" "$(wc -c <"$T/stdout") $(tr -d x <"$T/stdout" | wc -c)" \
	"5000000 0"
check "300 kB of stderr" "$(wc -c <"$T/stderr") $(tr -d y <"$T/stderr" | wc -c)" \
	"300000 0"

check "containers removed" "$(vigil_containers)" ""

err=$("$DA" --task-dir "$T" --pull never --image localhost/absent:1 \
	run -- true 2>&1)
check "missing image, pull never" "$err" "error: docker: image \
'localhost/absent:1' is not present and docker.pull is 'never' (use \
'missing' or 'always' to pull it)"

err=$("$DA" --task-dir "$T" --host "unix://$tmp/none.sock" run -- true 2>&1)
check "engine unreachable" "$err" "error: docker: connecting to the \
engine: GET /_ping on unix://$tmp/none.sock: cannot connect: No such file \
or directory (gave up after 4 tries)"

err=$("$DA" --task-dir "$T" --host "ftp://x" run -- true 2>&1)
check "bad endpoint" "$err" "error: docker: endpoint 'ftp://x' is not \
unix:///PATH, tcp://HOST:PORT, http://... or https://..."

out=$("$DA" --task-dir "$T" probe)
check "probe" "$out" "docker: ok (unix://$tmp/pm/podman.sock, API 1.41)"

out=$("$DA" --image 'bad image' --volume 'x' --pull sometimes \
	--device fuse --workdir rel --manifest-file job.yaml validate)
check "validate" "$out" "job.yaml: image 'bad image': character ' ' is not \
allowed in an image reference
job.yaml: docker.volumes: volume 'x': expected SRC:DST[:ro|rw] or an \
absolute DST
job.yaml: docker.pull: 'sometimes' is not one of missing, always, never
job.yaml: docker.devices: 'fuse' must start with the host device path \
(/dev/...)
job.yaml: workdir: 'rel' must be an absolute path inside the container"
exit $fail

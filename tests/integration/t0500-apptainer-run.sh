#!/bin/sh
# A task runs in a real SIF through the singularity backend: exit codes,
# output, the task directory and /scratch binds, environment through the
# env file (exact bytes, never on the command line), manifest binds.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
need_driver

mkdir -p "$tmp/t0" "$tmp/t1" "$tmp/t2" "$tmp/t3" "$tmp/data" "$tmp/s3"
echo payload >"$tmp/data/in.txt"

# exit 0 and output
r=$(drv "$tmp/t0" -- sh -c 'echo out; echo err >&2')
expect "$r" "state=SUCCEEDED exit=0 signal=0 reason=" "exit 0"
expect "$(cat "$tmp/t0/stdout")" "out" "stdout"
grep -qx err "$tmp/t0/stderr" || fail "stderr lacks 'err': $(cat "$tmp/t0/stderr")"

# a task's own non-zero exit code
r=$(drv "$tmp/t1" -c 'exit 7')
expect "$r" "state=FAILED exit=7 signal=0 reason=exit code 7" "exit 7"

# exit 255 without a FATAL line stays the task's
r=$(drv "$tmp/t1" -c 'echo "not fatal" >&2; exit 255')
expect "$r" "state=FAILED exit=255 signal=0 reason=exit code 255" "exit 255"

# scratch at /scratch (made by the backend under $VIGIL_HOME since no
# scratch filesystem is set), writable, and the cwd; kept on failure
r=$(drv --run runA --index 3 "$tmp/t2" -c \
    'pwd; echo hi >/scratch/f; echo "$VIGIL_SCRATCH"; exit 1')
expect "$r" "state=FAILED exit=1 signal=0 reason=exit code 1" "scratch run"
expect "$(sed -n 1p "$tmp/t2/stdout")" "/scratch" "pwd is /scratch"
expect "$(sed -n 2p "$tmp/t2/stdout")" "/scratch" "VIGIL_SCRATCH"
sdir=$(cd "$VIGIL_HOME" && pwd -P)/vigil/runA/3
expect "$(cat "$sdir/f")" "hi" "scratch file on the host"
expect "$(stat -c %a "$sdir")" "700" "scratch dir mode"
[ ! -e "$VIGIL_HOME/vigil/runA/.task-3.owner" ] || fail "owner record left"
# success removes it (scratch.keep on-failure)
r=$(drv --run runB "$tmp/t2" -c 'echo x >/scratch/g')
expect "$r" "state=SUCCEEDED exit=0 signal=0 reason=" "scratch success"
[ ! -e "$VIGIL_HOME/vigil/runB" ] || fail "scratch of a succeeded task kept"
# keep always, a given scratch dir and another mount point
r=$(drv --run runC --keep always "$tmp/t2" -c 'echo k >/scratch/k')
[ -f "$VIGIL_HOME/vigil/runC/0/k" ] || fail "keep always removed scratch"
r=$(drv --scratch "$tmp/s3" --scratch-mount /work "$tmp/t2" -c \
    'pwd; echo w >/work/w')
expect "$(tail -n 1 "$tmp/t2/stdout")" "/work" "scratch_mount pwd"
expect "$(cat "$tmp/s3/w")" "w" "given scratch dir"

# the task directory is bound at the same path
r=$(drv "$tmp/t3" -c 'echo "$VIGIL_TASK_DIR"; touch "$VIGIL_TASK_DIR/made"')
expect "$(cat "$tmp/t3/stdout")" "$tmp/t3" "VIGIL_TASK_DIR"
[ -f "$tmp/t3/made" ] || fail "task dir not writable from the container"

# environment: exact bytes through the env file, --cleanenv keeps the host
# environment out, and the value never appears on a command line
val='sp ace "dq" $HOME `bt` \bs '"'sq'"' é'
HOSTONLY=leak; export HOSTONLY
drv --env "SECRET=$val" --env "EMPTY=" "$tmp/t3" -c \
    'sleep 2; printf "%s|%s|%s\n" "$SECRET" "${EMPTY-unset}" "${HOSTONLY-none}"' \
    >"$tmp/r.out" &
dpid=$!
sleep 1
# every process but the driver itself (whose own argv holds the value)
ps -eo args | grep -v "^$DRIVER" >"$tmp/ps.txt"
envf=$tmp/t3/.apptainer-env
mode=$(stat -c %a "$envf" 2>/dev/null)
wait $dpid
expect "$(cat "$tmp/r.out")" "state=SUCCEEDED exit=0 signal=0 reason=" "env run"
expect "$(tail -n 1 "$tmp/t3/stdout")" "$val||none" "env values"
expect "$mode" "600" "env file mode while running"
grep -q 'sp ace' "$tmp/ps.txt" && fail "secret visible in ps: $(grep 'sp ace' "$tmp/ps.txt")"
[ ! -e "$envf" ] || fail "env file left after the task"

# manifest binds: read-only source visible, writes refused
r=$(drv --bind "$tmp/data:/data:ro" "$tmp/t3" -c \
    'cat /data/in.txt; echo x >/data/new 2>/dev/null && echo wrote')
expect "$(tail -n 1 "$tmp/t3/stdout")" "payload" "ro bind read"
[ ! -e "$tmp/data/new" ] || fail "ro bind was writable"
r=$(drv --bind "$tmp/data" "$tmp/t3" -c "cat $tmp/data/in.txt")
expect "$(tail -n 1 "$tmp/t3/stdout")" "payload" "bind at same path"

# system trees need an allow rule; a missing source is refused
r=$(drv --bind /etc:/hostetc "$tmp/t3" -- true)
expect "$r" "error: singularity.binds[0]: bind '/etc:/hostetc': source '/etc' is a system directory; binding it needs a policy allow rule with category 'bind' matching '/etc'" "system bind"
r=$(drv --bind /etc:/hostetc:ro --allow-bind '/etc' "$tmp/t3" -c \
    'test -f /hostetc/hostname && echo seen')
expect "$(tail -n 1 "$tmp/t3/stdout")" "seen" "allowed system bind"
r=$(drv --bind "$tmp/nope:/x" "$tmp/t3" -- true)
expect "$r" "error: singularity.binds[0]: bind '$tmp/nope:/x': source '$tmp/nope' does not exist" "missing bind source"
ln -s /etc "$tmp/etclink"
r=$(drv --bind "$tmp/etclink:/e" "$tmp/t3" -- true)
expect "$r" "error: singularity.binds[0]: bind '$tmp/etclink:/e': source '/etc' is a system directory; binding it needs a policy allow rule with category 'bind' matching '/etc'" "symlink into /etc"

# an extra flag that would bypass the checks is refused
r=$(drv --flag "--bind=/:/host" "$tmp/t3" -- true)
expect "$r" "error: singularity.flags: '--bind=/:/host' is not allowed here; use singularity.binds, which vigil checks" "flag bypass"
# a harmless extra flag reaches apptainer
r=$(drv --flag --writable-tmpfs "$tmp/t3" -c 'echo x >/newfile && echo ok')
expect "$(tail -n 1 "$tmp/t3/stdout")" "ok" "extra flag"

# probe reports the version for vigil doctor
r=$(VIGIL_APPTAINER=$APPTAINER_WRAP "$DRIVER" --probe)
expect "$r" "singularity: ok apptainer version 1.4.5 ($APPTAINER_WRAP)" "probe"
echo "t0500: ok"

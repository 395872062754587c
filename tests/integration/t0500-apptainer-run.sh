#!/bin/sh
# `vigil run` with backend: singularity and the real apptainer: tasks run
# in a real SIF; exit codes and output; the task directory and /scratch
# binds; environment through the env file (exact bytes, never on a
# command line, the host's kept out); manifest binds and their checks;
# extra flags; vigil doctor's line.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
unset APPTAINER_WRAP_BINDS

# exit codes and output: the task's own, 255 without FATAL is the task's
m=$(mf codes "'echo out \${{ matrix.code }}; echo err >&2; exit \${{ matrix.code }}'" \
    "matrix:" "  code: [0, 7, 255]")
vrun "$m"
expect "$vrc" "1" "exit status of a run with failed tasks"
expect "$(task 0)" "SUCCEEDED 0 0 " "exit 0"
expect "$(task 1)" "FAILED 7 0 exit code 7" "exit 7"
expect "$(task 2)" "FAILED 255 0 exit code 255" "exit 255 without FATAL"
expect "$("$VIGIL" logs "$rid/1")" "out 7" "stdout"
expect "$("$VIGIL" logs "$rid/1" --stderr)" "err" "stderr"
# it really ran in the SIF: busybox's sh, not the host's
m=$(mf sif "'readlink /bin/sh; cat /etc/os-release 2>&1 | head -c 20'")
vrun "$m"
expect "$vrc" "0" "exit status"
expect "$("$VIGIL" logs "$rid/0" | head -n 1)" "busybox" "the image's /bin/sh"

# scratch at /scratch (the backend's own under the state directory when
# no scratch filesystem is set), writable, the cwd; kept on failure
m=$(mf scr "'pwd; echo hi >/scratch/f; echo \"\$VIGIL_SCRATCH\"; exit \${{ matrix.rc }}'" \
    "matrix:" "  rc: [1, 0]")
vrun "$m"
expect "$(task 0)" "FAILED 1 0 exit code 1" "scratch task"
expect "$("$VIGIL" logs "$rid/0")" "/scratch
/scratch" "pwd and VIGIL_SCRATCH"
sdir=$(cd "$VIGIL_HOME" && pwd -P)/vigil/$rid
expect "$(cat "$sdir/0/f")" "hi" "scratch file on the host (kept on failure)"
expect "$(stat -c %a "$sdir/0")" "700" "scratch dir mode"
[ ! -e "$sdir/1" ] || fail "scratch of a succeeded task kept"
[ ! -e "$sdir/.task-0.owner" ] || fail "owner record left"
# keep: always, scratch.path and another mount point
m=$(mf keep "'pwd; echo k >/work/k'" "scratch:" "  path: $tmp/sbase" \
    "  keep: always" "singularity:" "  binary: $APPTAINER_WRAP" \
    "  scratch_mount: /work")
vrun "$m"
expect "$vrc" "0" "scratch.keep always run"
expect "$("$VIGIL" logs "$rid/0")" "/work" "scratch_mount is the cwd"
expect "$(cat "$(cd "$tmp/sbase" && pwd -P)/vigil/$rid/0/k")" "k" \
    "scratch.path and keep always"

# the task directory is bound at the same path and writable
m=$(mf tdir "'echo \"\$VIGIL_TASK_DIR\"; touch \"\$VIGIL_TASK_DIR/made\"'")
vrun "$m"
td=$("$VIGIL" logs "$rid/0")
expect "$td" "$VIGIL_HOME/runs/$rid/tasks/0" "VIGIL_TASK_DIR"
[ -f "$td/made" ] || fail "task dir not writable from the container"

# environment: exact bytes through the env file, --cleanenv keeps the host
# environment out, the value never on a command line, the file 0600 and
# gone afterwards
cat >"$tmp/env.yaml" <<EOF
version: 1
backend: singularity
image: $BUSYBOX_SIF
singularity:
  binary: $APPTAINER_WRAP
env:
  SECRET: 'sp ace "dq" \$HOME \`bt\` \\bs ''sq'' é'
  EMPTY: ""
command: 'sleep 2; printf "%s|%s|%s\n" "\$SECRET" "\${EMPTY-unset}" "\${HOSTONLY-none}"'
EOF
val='sp ace "dq" $HOME `bt` \bs '"'sq'"' é'
HOSTONLY=leak
export HOSTONLY
"$VIGIL" run -q "$tmp/env.yaml" >"$tmp/env.out" 2>&1 &
vpid=$!
i=0
while [ -z "$(ls "$VIGIL_HOME"/runs/*/tasks/0/.apptainer-env 2>/dev/null)" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "no env file appeared"
	sleep 0.05
done
envf=$(ls "$VIGIL_HOME"/runs/*/tasks/0/.apptainer-env)
mode=$(stat -c %a "$envf")
sleep 0.5
ps -eo args >"$tmp/ps.txt"
wait $vpid
expect "$?" "0" "env run exit status ($(cat "$tmp/env.out"))"
unset HOSTONLY
rid=$(basename "$(dirname "$(dirname "$(dirname "$envf")")")")
expect "$("$VIGIL" logs "$rid/0")" "$val||none" "env values"
expect "$mode" "600" "env file mode while running"
grep -q 'sp ace' "$tmp/ps.txt" && fail "secret visible in ps: $(grep 'sp ace' "$tmp/ps.txt")"
[ ! -e "$envf" ] || fail "env file left after the task"

# manifest binds: read-only source visible, writes refused; same path
mkdir -p "$tmp/data"
echo payload >"$tmp/data/in.txt"
m=$(mf ro "'cat /data/in.txt; echo x >/data/new 2>/dev/null && echo wrote; cat $tmp/data/in.txt'" \
    "singularity:" "  binary: $APPTAINER_WRAP" "  binds:" \
    "    - $tmp/data:/data:ro" "    - $tmp/data")
vrun "$m"
expect "$("$VIGIL" logs "$rid/0")" "payload
payload" "ro bind read, same-path bind"
[ ! -e "$tmp/data/new" ] || fail "ro bind was writable"

# system trees need an allow rule; missing sources and symlinks into
# system trees are refused before anything runs
m=$(mf sys "true" "singularity:" "  binary: $APPTAINER_WRAP" "  binds:" \
    "    - /etc:/hostetc" "    - $tmp/nope:/x")
ln -s /etc "$tmp/etclink"
echo "    - $tmp/etclink:/e" >>"$m"
vrun "$m"
expect "$vrc" "2" "exit status of an invalid manifest"
expect "$(cat "$tmp/run.err")" "$m:9:7: error: singularity.binds[0]: bind '/etc:/hostetc': source '/etc' is a system directory; binding it needs a policy allow rule with category 'host-access' matching '/etc'
    9 |     - /etc:/hostetc
      |       ^
$m:10:7: error: singularity.binds[1]: bind '$tmp/nope:/x': source '$tmp/nope' does not exist
   10 |     - $tmp/nope:/x
      |       ^
$m:11:7: error: singularity.binds[2]: bind '$tmp/etclink:/e': source '/etc' is a system directory; binding it needs a policy allow rule with category 'host-access' matching '/etc'
   11 |     - $tmp/etclink:/e
      |       ^" "refused binds"
# an allow rule of category host-access whose glob matches the resolved
# source lets a system tree in (read-only here)
m=$(mf allowed "'test -f /hostetc/hostname && echo seen'" \
    "policy:" "  allow:" "    - id: host-etc" "      category: host-access" \
    "      match: '/etc'" "      reason: the task reads the host's name" \
    "singularity:" "  binary: $APPTAINER_WRAP" "  binds: ['/etc:/hostetc:ro']")
vrun "$m"
expect "$vrc" "0" "allowed system bind"
expect "$("$VIGIL" logs "$rid/0")" "seen" "allowed system bind output"

# an extra flag that would bypass the checks is refused; a harmless one
# reaches apptainer
m=$(mf flag "true" "singularity:" "  binary: $APPTAINER_WRAP" \
    "  flags: ['--bind=/:/host']")
vrun "$m"
expect "$(cat "$tmp/run.err")" "$m:8:11: error: singularity.flags: '--bind=/:/host' is not allowed here; use singularity.binds, which vigil checks
    8 |   flags: ['--bind=/:/host']
      |           ^" "flag bypass"
m=$(mf tmpfs "'echo x >/newfile && echo ok'" "singularity:" \
    "  binary: $APPTAINER_WRAP" "  flags: [--writable-tmpfs]")
vrun "$m"
expect "$("$VIGIL" logs "$rid/0")" "ok" "extra flag"

# an argv command (no shell), and the apptainer alias
m=$(mf argv "[echo, 'two words', \$HOME]" "backend: apptainer")
sed -i '/^backend: singularity$/d' "$m"
vrun "$m"
expect "$("$VIGIL" logs "$rid/0")" "two words \$HOME" "argv command"

# vigil doctor reports the version
VIGIL_APPTAINER=$APPTAINER_WRAP "$VIGIL" doctor >"$tmp/doc" 2>&1
grep -qx "singularity: ok apptainer version 1.4.5 ($APPTAINER_WRAP)" "$tmp/doc" ||
	fail "doctor: $(grep singularity "$tmp/doc")"
echo "t0500: ok"

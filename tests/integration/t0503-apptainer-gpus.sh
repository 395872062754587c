#!/bin/sh
# t0503-apptainer-gpus: GPU tasks through the real apptainer on a host
# without the NVIDIA driver.  apptainer accepts --nv there (exit 0,
# nothing on stderr at its default verbosity; -v says only "persistenced
# socket ... not found": recorded in docs/gpus.md), and so does vigil's
# run: a task with gpus gets --nv on apptainer's command line (seen by a
# wrapper that logs its argv and execs the real apptainer), one without
# gets none; inside the container the env file gives each task the GPU
# the scheduler assigned (VIGIL_GPUS and CUDA_VISIBLE_DEVICES, the
# host's ids: apptainer does not renumber), and a task without gpus sees
# CUDA_VISIBLE_DEVICES set empty.  singularity.flags with --nv already is
# not doubled.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
unset APPTAINER_WRAP_BINDS

# apptainer itself: --nv and --rocm without a driver.
"$APPTAINER_WRAP" exec --nv "$BUSYBOX_SIF" sh -c 'ls /dev | grep -c nvidia' \
    >"$tmp/nv.out" 2>"$tmp/nv.err"
expect "$?" "1" "apptainer --nv exit (grep -c found no /dev/nvidia*)"
expect "$(cat "$tmp/nv.out")" "0" "no NVIDIA node in the container"
expect "$(cat "$tmp/nv.err")" "" "apptainer --nv prints nothing"
"$APPTAINER_WRAP" -v exec --nv "$BUSYBOX_SIF" true >"$tmp/nv.out" 2>&1 ||
    fail "apptainer -v --nv: $(cat "$tmp/nv.out")"
grep -q "^VERBOSE: persistenced socket /var/run/nvidia-persistenced/socket not found" \
    "$tmp/nv.out" || fail "apptainer -v --nv: $(cat "$tmp/nv.out")"
"$APPTAINER_WRAP" exec --rocm "$BUSYBOX_SIF" true 2>"$tmp/rocm.err" ||
    fail "apptainer --rocm: $(cat "$tmp/rocm.err")"

# A wrapper that records each command line, then runs the real one.
cat >"$tmp/app" <<S
#!/bin/sh
printf '%s\n' "\$*" >>"$tmp/argv.log"
exec "$APPTAINER_WRAP" "\$@"
S
chmod +x "$tmp/app"
m=$(mf gpus "'echo \"\${VIGIL_GPUS-unset} \${CUDA_VISIBLE_DEVICES-unset}\"'" \
    "matrix:" "  t: [a, b, c]" "  include:" "    - {t: a, g: 1}" \
    "    - {t: b, g: 0}" "    - {t: c, g: 1}" "resources:" \
    '  gpus: ${{ matrix.g }}' \
    "isolation:" "  level: none" \
    "singularity:" "  binary: $tmp/app")
CUDA_VISIBLE_DEVICES=0,1 vrun "$m"
expect "$vrc" "0" "gpu run: $(cat "$tmp/run.err")"
expect "$("$VIGIL" logs "$rid/1")" " " "a task without gpus: CUDA_VISIBLE_DEVICES empty"
g0=$("$VIGIL" logs "$rid/0")
g2=$("$VIGIL" logs "$rid/2")
case "$g0" in "0 0"|"1 1") ;; *) fail "task 0 saw '$g0'" ;; esac
case "$g2" in "0 0"|"1 1") ;; *) fail "task 2 saw '$g2'" ;; esac
expect "$(grep -c -- ' --nv ' "$tmp/argv.log")" "2" \
    "--nv on the two GPU tasks' command lines: $(cat "$tmp/argv.log")"
expect "$(grep -c '^exec\|^run\| exec ' "$tmp/argv.log")" "3" \
    "three task command lines: $(cat "$tmp/argv.log")"

# --nv in singularity.flags is not given twice.
: >"$tmp/argv.log"
m=$(mf flags "'true'" "resources:" "  gpus: 1" \
    "singularity:" "  binary: $tmp/app" "  flags: [--nv]")
CUDA_VISIBLE_DEVICES=0 vrun "$m"
expect "$vrc" "0" "flags run: $(cat "$tmp/run.err")"
expect "$(grep -o -- '--nv' "$tmp/argv.log" | wc -l | tr -d ' ')" "1" \
    "one --nv: $(cat "$tmp/argv.log")"
echo ok

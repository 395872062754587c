#!/bin/sh
# Apptainer's own failures are told apart from the task's exit code and
# reported with apptainer's FATAL text; vigil's own checks name what is
# missing.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"
need_driver
mkdir -p "$tmp/t"

# not a SIF: apptainer fails (255 + FATAL) -> BACKEND_ERROR
printf 'not an image' >"$tmp/bad.sif"
r=$("$DRIVER" --binary "$APPTAINER_WRAP" --image "$tmp/bad.sif" "$tmp/t" -- true)
expect "$r" "state=BACKEND_ERROR exit=255 signal=0 reason=apptainer: While checking container encryption: could not open image $tmp/bad.sif: image format not recognized" "corrupt image"

# a truncated SIF
head -c 4096 "$BUSYBOX_SIF" >"$tmp/trunc.sif"
r=$("$DRIVER" --binary "$APPTAINER_WRAP" --image "$tmp/trunc.sif" "$tmp/t" -- true)
case "$r" in
"state=BACKEND_ERROR exit=255 signal=0 reason=apptainer: "*) ;;
*) fail "truncated image: $r" ;;
esac

# a command missing from the image is apptainer's failure, not exit 127
r=$(drv "$tmp/t" -- /no/such/cmd)
expect "$r" "state=BACKEND_ERROR exit=255 signal=0 reason=apptainer: stat /no/such/cmd: no such file or directory" "missing command"

# the image is checked before apptainer runs
r=$("$DRIVER" --binary "$APPTAINER_WRAP" --image "$tmp/none.sif" "$tmp/t" -- true)
expect "$r" "error: image '$tmp/none.sif' does not exist" "missing image"
r=$("$DRIVER" --binary "$APPTAINER_WRAP" --image "docker://127.0.0.1:1/x:1" "$tmp/t" -- true)
case "$r" in "error: image 'docker://127.0.0.1:1/x:1': "*) ;;
*) fail "reference without cache: $r" ;; esac

# the binary: configured, $VIGIL_APPTAINER, $PATH
r=$("$DRIVER" --binary "$tmp/nope" --image "$BUSYBOX_SIF" "$tmp/t" -- true)
expect "$r" "error: singularity.binary '$tmp/nope' is not an executable file" "bad binary"
r=$(VIGIL_APPTAINER=$tmp/nope2 "$DRIVER" --image "$BUSYBOX_SIF" "$tmp/t" -- true)
expect "$r" "error: \$VIGIL_APPTAINER '$tmp/nope2' is not an executable file" "bad env binary"
r=$(PATH=$tmp "$DRIVER" --image "$BUSYBOX_SIF" "$tmp/t" -- true)
expect "$r" "error: neither 'apptainer' nor 'singularity' is in \$PATH ($tmp): install Apptainer, load its module, or set singularity.binary or \$VIGIL_APPTAINER" "no binary"
r=$(PATH=$tmp "$DRIVER" --probe)
expect "$r" "singularity: missing (neither 'apptainer' nor 'singularity' is in \$PATH ($tmp): install Apptainer, load its module, or set singularity.binary or \$VIGIL_APPTAINER)" "probe missing"
# found as `singularity` in $PATH when there is no `apptainer`
mkdir "$tmp/bin"
ln -s "$APPTAINER_WRAP" "$tmp/bin/singularity"
r=$(PATH=$tmp/bin:/usr/bin:/bin "$DRIVER" --image "$BUSYBOX_SIF" "$tmp/t" -c 'exit 3')
expect "$r" "state=FAILED exit=3 signal=0 reason=exit code 3" "singularity in PATH"

# validate reports every problem of the section at once
r=$("$DRIVER" --validate --image "$tmp/none.sif" --bind relative:/x \
    --bind /:/host --flag --home=/x --scratch-mount rel --pwd rel)
expect "$r" "driver.yaml: singularity.binds[0]: bind 'relative:/x': source 'relative' is not an absolute path
driver.yaml: singularity.binds[1]: bind '/:/host': source '/' is the root directory; binding it needs a policy allow rule with category 'bind' matching '/'
driver.yaml: singularity.flags: '--home=/x' is not allowed here; use singularity.binds, which vigil checks
driver.yaml: singularity.scratch_mount 'rel' is not an absolute path
driver.yaml: singularity.pwd 'rel' is not an absolute path
driver.yaml: image '$tmp/none.sif' does not exist
validate=-1" "validate"
echo "t0502: ok"

#!/bin/sh
# Through `vigil run`: apptainer's own failures (an image that is not a
# SIF, a truncated one, a command missing from the image) are told apart
# from the task's exit code and reported with apptainer's FATAL text;
# vigil's own checks (a missing image; a missing binary, which this
# host cannot run with: exit 6) name what to change; `vigil validate` reports every problem of the section at once.
set -u
. "$(dirname "$0")/../harness/apptainer-lib.sh"

# not a SIF: apptainer fails (255 + FATAL) -> BACKEND_ERROR, not FAILED
printf 'not an image' >"$tmp/bad.sif"
m=$(mf bad "true")
sed -i "s|^image: .*|image: $tmp/bad.sif|" "$m"
vrun "$m"
expect "$vrc" "1" "exit status with a corrupt image"
expect "$(task 0)" "BACKEND_ERROR 255 0 apptainer: While checking container encryption: could not open image $tmp/bad.sif: image format not recognized" "corrupt image"

# a truncated SIF
head -c 4096 "$BUSYBOX_SIF" >"$tmp/trunc.sif"
m=$(mf trunc "true")
sed -i "s|^image: .*|image: $tmp/trunc.sif|" "$m"
vrun "$m"
case "$(task 0)" in
"BACKEND_ERROR 255 0 apptainer: "*) ;;
*) fail "truncated image: $(task 0)" ;;
esac

# a command missing from the image is apptainer's failure, not exit 127;
# the task's own 127 stays the task's
m=$(mf nocmd "[/no/such/cmd]")
vrun "$m"
expect "$(task 0)" "BACKEND_ERROR 255 0 apptainer: stat /no/such/cmd: no such file or directory" "missing command"
m=$(mf own127 "'exit 127'")
vrun "$m"
expect "$(task 0)" "FAILED 127 0 exit code 127" "the task's own 127"

# a missing local image is refused before anything runs
m=$(mf none "true")
sed -i "s|^image: .*|image: $tmp/none.sif|" "$m"
vrun "$m"
expect "$vrc" "2" "exit status with a missing image"
expect "$(cat "$tmp/run.err")" "$m:4:1: error: image '$tmp/none.sif' does not exist
    4 | image: $tmp/none.sif
      | ^" "missing image"
m=$(mf scheme "true")
sed -i "s|^image: .*|image: ftp://example/x.sif|" "$m"
vrun "$m"
expect "$(cat "$tmp/run.err")" "$m:4:1: error: image 'ftp://example/x.sif': unknown scheme (valid: docker://, oras://, library://, https://, http://, or a .sif path)
    4 | image: ftp://example/x.sif
      | ^" "unknown scheme"

# the binary: configured, $VIGIL_APPTAINER, $PATH; a missing one means
# this host cannot run the manifest: refused before anything is recorded
# (exit 6), naming the setting to change
m=$(mf nobin "true" "singularity:" "  binary: $tmp/nope")
vrun "$m"
expect "$vrc" "6" "exit status with a missing binary ($(cat "$tmp/run.err"))"
expect "$(tail -1 "$tmp/run.err")" "  apptainer: singularity.binary '$tmp/nope' is not an executable file" "bad binary"
m=$(mf envbin "true" "singularity: {}")
VIGIL_APPTAINER=$tmp/nope2
export VIGIL_APPTAINER
vrun "$m"
unset VIGIL_APPTAINER
expect "$vrc" "6" "exit status with a bad \$VIGIL_APPTAINER"
expect "$(tail -1 "$tmp/run.err")" "  apptainer: \$VIGIL_APPTAINER '$tmp/nope2' is not an executable file" "bad env binary"
mkdir "$tmp/bin"
opath=$PATH
PATH=$tmp/bin
vrun "$m"
PATH=$opath
expect "$(tail -1 "$tmp/run.err")" "  apptainer: neither 'apptainer' nor 'singularity' is in \$PATH ($tmp/bin): install Apptainer, load its module, or set singularity.binary or \$VIGIL_APPTAINER" "no binary"
# found as `singularity` in $PATH when there is no `apptainer`
ln -s "$APPTAINER_WRAP" "$tmp/bin/singularity"
m=$(mf inpath "'exit 3'" "singularity: {}")
PATH=$tmp/bin:/usr/bin:/bin
vrun "$m"
PATH=$opath
expect "$(task 0)" "FAILED 3 0 exit code 3" "singularity in PATH"

# validate reports every problem of the section at once
m=$(mf val "true" "singularity:" "  binary: $APPTAINER_WRAP" \
    "  binds: [relative:/x, '/:/host']" "  flags: ['--home=/x']" \
    "  scratch_mount: rel" "  pwd: rel")
sed -i "s|^image: .*|image: $tmp/none.sif|" "$m"
"$VIGIL" validate "$m" >"$tmp/val.out" 2>&1
expect "$?" "2" "validate exit status"
expect "$(cat "$tmp/val.out")" "$m:4:1: error: image '$tmp/none.sif' does not exist
    4 | image: $tmp/none.sif
      | ^
$m:8:11: error: singularity.binds[0]: bind 'relative:/x': source 'relative' is not an absolute path
    8 |   binds: [relative:/x, '/:/host']
      |           ^
$m:8:24: error: singularity.binds[1]: bind '/:/host': source '/' is the root directory; binding it needs a policy allow rule with category 'host-access' matching '/'
    8 |   binds: [relative:/x, '/:/host']
      |                        ^
$m:9:11: error: singularity.flags: '--home=/x' is not allowed here; use singularity.binds, which vigil checks
    9 |   flags: ['--home=/x']
      |           ^
$m:10:3: error: singularity.scratch_mount 'rel' is not an absolute path
   10 |   scratch_mount: rel
      |   ^
$m:11:3: error: singularity.pwd 'rel' is not an absolute path
   11 |   pwd: rel
      |   ^" "validate"
echo "t0502: ok"

#!/bin/sh
# t0100-manifest-bad: `vigil validate` on every manifest in
# tests/data/manifests/bad must exit 2 and print exactly the lines of its
# .err file (stderr), each problem placed as FILE:LINE:COL: error: and
# followed by its source line with a caret under the column (and a hint
# for some); NAME.args holds extra arguments, one per line.
# Every manifest in good/ must validate.  An oversize file is generated.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
data=$here/data/manifests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# No site or user config may leak in from the machine running the tests.
VIGIL_SITE_CONFIG= VIGIL_USER_CONFIG= VIGIL_HOME=$tmp/home
export VIGIL_SITE_CONFIG VIGIL_USER_CONFIG VIGIL_HOME
fail=0 n=0

cd "$data/bad" || exit 1
for f in *.yaml; do
	name=${f%.yaml}
	n=$((n + 1))
	set --
	if [ -f "$name.args" ]; then
		while IFS= read -r line; do set -- "$@" "$line"; done \
		    <"$name.args"
	fi
	"$VIGIL" validate "$@" "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		echo "FAIL $name: exit $rc, expected 2"; fail=1
	fi
	if [ -s "$tmp/out" ]; then
		echo "FAIL $name: unexpected stdout:"; cat "$tmp/out"; fail=1
	fi
	if ! diff -u "$name.err" "$tmp/err" >"$tmp/diff"; then
		echo "FAIL $name: diagnostics differ:"; cat "$tmp/diff"; fail=1
	fi
	# Every problem is placed: FILE:LINE:COL: error: (a --set is its
	# own file), then its line and a caret, then any hint.
	if grep -Ev "^($f|--set '.*'):[1-9][0-9]*:[1-9][0-9]*: error: |^ *[0-9]+ \| |^ +\| +\^\$|^hint: " \
	    "$name.err" "$tmp/err" >"$tmp/unplaced"; then
		echo "FAIL $name: problems without FILE:LINE:COL:"
		cat "$tmp/unplaced"; fail=1
	fi
done
echo "bad manifests: $n checked"
[ $n -ge 45 ] || { echo "FAIL: only $n bad manifests"; fail=1; }

# A file over the 1 MiB limit is refused before parsing.
{ echo "version: 1"; echo "command: echo hi"; i=0
  while [ $i -lt 1100 ]; do
	printf '# %01020d\n' 0; i=$((i + 1))
  done; } >"$tmp/big.yaml"
"$VIGIL" validate "$tmp/big.yaml" 2>"$tmp/err"
rc=$?
echo "vigil: '$tmp/big.yaml' is larger than 1048576 bytes" >"$tmp/want"
if [ $rc -ne 2 ] || ! diff -u "$tmp/want" "$tmp/err"; then
	echo "FAIL oversize: exit $rc"; fail=1
fi

# Standard input ("-"), named <stdin>, with its line and caret as a file's.
printf 'version: 1\ncommand: echo\ntimeout: soon\n' |
    "$VIGIL" validate - >"$tmp/out" 2>"$tmp/err"
rc=$?
printf '%s\n' "<stdin>:3:10: error: 'timeout' must be a duration such as 90, \
30s, 5m, 1h30m, 2d or 1-00:00:00, not 'soon'" "    3 | timeout: soon" \
    "      |          ^" >"$tmp/want"
if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || ! diff -u "$tmp/want" "$tmp/err"; then
	echo "FAIL stdin: exit $rc"; fail=1
fi
head -c 1100000 /dev/zero | tr '\0' '#' | "$VIGIL" validate - 2>"$tmp/err"
rc=$?
echo "vigil: '<stdin>' is larger than 1048576 bytes" >"$tmp/want"
if [ $rc -ne 2 ] || ! diff -u "$tmp/want" "$tmp/err"; then
	echo "FAIL oversize stdin: exit $rc"; fail=1
fi
printf 'version: 1\ncommand: echo\n' | "$VIGIL" validate - >"$tmp/out" 2>&1
if [ $? -ne 0 ] || [ "$(cat "$tmp/out")" != "<stdin>: ok (1 task)" ]; then
	echo "FAIL stdin ok: $(cat "$tmp/out")"; fail=1
fi

# A missing file.
"$VIGIL" validate "$tmp/none.yaml" 2>"$tmp/err"
rc=$?
echo "vigil: '$tmp/none.yaml' does not exist" >"$tmp/want"
if [ $rc -ne 2 ] || ! diff -u "$tmp/want" "$tmp/err"; then
	echo "FAIL missing file: exit $rc"; fail=1
fi

# Good manifests and the examples validate, with their task counts (the
# user config example allows the webhook token they name).
ucfg=$here/../examples/site/user-config.yaml
cd "$data/good" || exit 1
for f in *.yaml; do
	want=$(sed -n 's/^# tasks: //p' "$f")
	# Valid is valid whatever this host lacks (exit 6: "valid (N
	# tasks); this host cannot run it:", t0236); the count is checked
	# either way.
	out=$(VIGIL_USER_CONFIG=$ucfg "$VIGIL" validate "$f" 2>/dev/null |
	    head -n 1)
	n="$want task$([ "$want" = 1 ] || echo s)"
	case "$out" in
	"$f: ok ($n)"|"$f: valid ($n); this host cannot run it:") ;;
	*)	echo "FAIL good/$f: $out"; fail=1 ;;
	esac
done
cd "$here/.." || exit 1
# The cloud examples need credentials to exist (not to work).
MODAL_TOKEN_ID=ak-example MODAL_TOKEN_SECRET=as-example
MODAL_CONFIG_PATH=$tmp/no-modal.toml DAYTONA_API_KEY=example
VERCEL_TOKEN=example VERCEL_TEAM_ID=team_example VERCEL_PROJECT_ID=prj_example
export MODAL_TOKEN_ID MODAL_TOKEN_SECRET MODAL_CONFIG_PATH DAYTONA_API_KEY \
    VERCEL_TOKEN VERCEL_TEAM_ID VERCEL_PROJECT_ID
# The GPU examples need a pool with GPUs to fit (two, as t0210 gives).
# The user config example allows the webhook token cron-batch.yaml uses.
# Valid is what is checked here: exit 6 says only that this host lacks
# an engine or a binary the example needs (t0236 checks that section).
for f in examples/jobs/*.yaml; do
	CUDA_VISIBLE_DEVICES=0,1 VIGIL_USER_CONFIG=examples/site/user-config.yaml \
	    "$VIGIL" validate "$f" >/dev/null
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 6 ] || { echo "FAIL $f: exit $rc"; fail=1; }
done
exit $fail

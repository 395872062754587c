#!/bin/sh
# check-layers.sh - no include climbs back up a floor.
#
# The floors, lowest first (docs/design.md, "Floors"):
#   0 common/            1 runner/manifest/   2 runner/policy/
#   3 scratch/ sif-cache/                     4 backends/
#   5 schedulers/        6 runner/core/       7 runner/cli/
# A file may include headers of its own floor and of lower ones, always
# root-relative ("common/buf.h").  With a build directory (check-layers.sh
# BUILD, as make check runs it after building) the objects are checked
# too: no object may use a symbol that only an object of a higher floor
# defines (a call up a floor left for the linker, which no include
# shows).  Prints each offending include or symbol and exits 1 when there
# is one.
set -eu
cd "$(dirname "$0")/.."
floor() {
	case "$1" in
	common/*) echo 0 ;;
	runner/manifest/*) echo 1 ;;
	runner/policy/*) echo 2 ;;
	scratch/*|sif-cache/*) echo 3 ;;
	backends/*) echo 4 ;;
	schedulers/*) echo 5 ;;
	runner/core/*) echo 6 ;;
	runner/cli/*) echo 7 ;;
	*) echo 99 ;;
	esac
}
bad=0
for f in $(git ls-files 'common/*.[ch]' 'runner/*.[ch]' 'scratch/*.[ch]' \
    'sif-cache/*.[ch]' 'backends/*.[ch]' 'schedulers/*.[ch]'); do
	ff=$(floor "$f")
	[ "$ff" = 99 ] && { echo "$f: not on any floor"; bad=1; continue; }
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		if [ ! -f "$inc" ]; then
			echo "$f: include \"$inc\" is not root-relative"
			bad=1
			continue
		fi
		fi_=$(floor "$inc")
		if [ "$fi_" -gt "$ff" ]; then
			echo "$f (floor $ff): includes $inc (floor $fi_)"
			bad=1
		fi
	done
done
[ $bad -eq 0 ] && echo "layers: every include stays on its floor or below"

# The objects: which floor defines each global symbol, then every
# undefined symbol of an object against it.
build=${1:-}
if [ -n "$build" ]; then
	syms=$(mktemp)
	trap 'rm -f "$syms"' EXIT
	for src in $(git ls-files 'common/*.c' 'runner/*.c' 'scratch/*.c' \
	    'sif-cache/*.c' 'backends/*.c' 'schedulers/*.c'); do
		o="$build/${src%.c}.o"
		[ -f "$o" ] || continue
		ff=$(floor "$src")
		nm -g --defined-only "$o" 2>/dev/null |
		    awk -v f="$ff" -v s="$src" 'NF == 3 { print $3, f, s, "D" }'
		nm -u "$o" 2>/dev/null |
		    awk -v f="$ff" -v s="$src" '{ print $NF, f, s, "U" }'
	done >"$syms"
	up=$(awk 'NR == FNR { if ($4 == "D") { fl[$1] = $2; file[$1] = $3 }
		next }
	    $4 == "U" && ($1 in fl) && fl[$1] > $2 {
		printf "%s (floor %s): uses %s, defined by %s (floor %s)\n",
		    $3, $2, $1, file[$1], fl[$1] }' "$syms" "$syms")
	if [ -n "$up" ]; then
		echo "$up"
		bad=1
	else
		echo "layers: no object calls up a floor"
	fi
fi
exit $bad

#!/bin/sh
# check-layers.sh - no include climbs back up a floor.
#
# The floors, lowest first (docs/design.md, "Floors"):
#   0 common/            1 runner/manifest/   2 runner/policy/
#   3 scratch/ sif-cache/                     4 backends/
#   5 schedulers/        6 runner/core/       7 runner/cli/
# A file may include headers of its own floor and of lower ones, always
# root-relative ("common/buf.h").  Prints each offending include and exits
# 1 when there is one.
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
exit $bad

#!/bin/sh
# The manual page and the bash completion are generated from the command
# table: the committed docs/vigil.1 and completion/vigil.bash must be what
# the binary writes now (else: make docs), the page must format without
# warnings, and the completion must load in bash and complete commands,
# options, option values and subcommand words.  The README's tour shows
# the example manifest it runs, byte for byte.
set -u
. "$(dirname "$0")/engine-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

# The README's tour shows examples/jobs/sweep.yaml as it is.
sed -n '/^A manifest (`examples\/jobs\/sweep.yaml`):$/,/^```$/p' \
    "$top/README.md" | sed '1,3d;$d' >"$W/tour.yaml"
cmp -s "$W/tour.yaml" "$top/examples/jobs/sweep.yaml" ||
    fail "README.md's tour differs from examples/jobs/sweep.yaml:
$(diff "$top/examples/jobs/sweep.yaml" "$W/tour.yaml" | head -20)"

"$VIGIL" help --man >"$W/vigil.1" || fail "help --man exit $?"
cmp -s "$W/vigil.1" "$top/docs/vigil.1" ||
    fail "docs/vigil.1 differs from 'vigil help --man' (run make docs):
$(diff "$top/docs/vigil.1" "$W/vigil.1" | head -20)"
"$VIGIL" help --bash-completion >"$W/vigil.bash" ||
    fail "help --bash-completion exit $?"
cmp -s "$W/vigil.bash" "$top/completion/vigil.bash" ||
    fail "completion/vigil.bash differs from" \
	"'vigil help --bash-completion' (run make docs):
$(diff "$top/completion/vigil.bash" "$W/vigil.bash" | head -20)"

"$VIGIL" help --man run 2>"$W/err"
expect_eq "--man with a command" 2 $?
"$VIGIL" help --man --bash-completion 2>"$W/err"
expect_eq "--man and --bash-completion" 2 $?

if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$top/docs/vigil.1" 2>"$W/groff" ||
	    fail "groff: $(cat "$W/groff")"
	[ ! -s "$W/groff" ] || fail "groff warnings: $(cat "$W/groff")"
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" \
	    ENVIRONMENT FILES "SEE ALSO"; do
		grep -qx "\.SH $s" "$top/docs/vigil.1" || fail "no section $s"
	done
fi

command -v bash >/dev/null 2>&1 || { echo "no bash"; exit 77; }
# complete WORD... : what <TAB> after the words offers, in bash.
complete_words() {
	bash -c '. "$1" || exit 1; shift
		complete -p vigil >/dev/null || exit 1
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_vigil; echo "${COMPREPLY[*]}"' sh \
	    "$top/completion/vigil.bash" "$@"
}
expect_eq "vigil st<TAB>" "status" "$(complete_words vigil st)"
expect_eq "vigil re<TAB>" "report resume retry reuse" "$(complete_words vigil re)"
expect_eq "vigil run --mo<TAB>" "--mode" "$(complete_words vigil run --mo)"
expect_eq "vigil run --mode auto-a<TAB>" "auto-approve" \
    "$(complete_words vigil run --mode auto-a)"
expect_eq "vigil st --js<TAB>" "--json" "$(complete_words vigil st --js)"
expect_eq "vigil cache --json p<TAB>" "pull" \
    "$(complete_words vigil cache --json p)"
expect_eq "vigil cache --dir /x <TAB>" "list pull verify gc rm" \
    "$(complete_words vigil cache --dir /x '')"
expect_eq "vigil cache list <TAB>" "" "$(complete_words vigil cache list '')"
expect_eq "vigil help ca<TAB>" "cancel cache" \
    "$(complete_words vigil help ca)"
expect_eq "vigil task<TAB> (hidden)" "" "$(complete_words vigil task)"
expect_eq "vigil __c<TAB> (hidden)" "" "$(complete_words vigil __c)"

# Run and session ids, from vigil __complete: nothing (and no home made)
# before the first run, quietly on a bad word; then the runs, newest
# first, for each command that takes a run, and session ids for session's
# subcommands.
out=$("$VIGIL" __complete runs 2>&1)
expect_eq "__complete without a home: exit" 0 $?
expect_eq "__complete without a home" "" "$out"
[ ! -e "$VIGIL_HOME" ] || fail "__complete made $VIGIL_HOME"
printf 'version: 1\nname: c%s\ncommand: "true"\n' 1 >"$W/c1.yaml"
printf 'version: 1\nname: c%s\ncommand: "true"\n' 2 >"$W/c2.yaml"
"$VIGIL" run -q "$W/c1.yaml" >/dev/null 2>&1 || fail "run c1"
"$VIGIL" run -q "$W/c2.yaml" >/dev/null 2>&1 || fail "run c2"
ids=$("$VIGIL" status --json | python3 -c 'import json,sys
print(" ".join(r["id"] for r in json.load(sys.stdin)["runs"]))')
expect_eq "__complete runs" "last $ids" \
    "$("$VIGIL" __complete runs | tr '\n' ' ' | sed 's/ $//')"
out=$("$VIGIL" __complete nonsense 2>&1)
expect_eq "__complete nonsense: exit" 0 $?
expect_eq "__complete nonsense" "" "$out"
expect_eq "__complete sessions (none)" "" "$("$VIGIL" __complete sessions)"
first=${ids%% *}
for c in status logs report cancel resume retry; do
	expect_eq "vigil $c <TAB>" "last $ids" \
	    "$(complete_words "$VIGIL" "$c" '')"
done
expect_eq "vigil status ${first%??}<TAB>" "$first" \
    "$(complete_words "$VIGIL" status "${first%??}")"
expect_eq "vigil status --json l<TAB>" "last" \
    "$(complete_words "$VIGIL" status --json l)"
expect_eq "vigil session <TAB>" "start list stop jobs output kill input egress" \
    "$(complete_words "$VIGIL" session '')"
printf '#!/bin/sh\n[ "$1 $2" = "__complete sessions" ] && printf %s\n' \
    "'s-1\\nbox\\n'" >"$W/fake-vigil"
chmod +x "$W/fake-vigil"
expect_eq "vigil session stop <TAB>" "s-1 box" \
    "$(complete_words "$W/fake-vigil" session stop '')"
expect_eq "vigil validate <TAB> (files)" "" \
    "$(complete_words "$W/fake-vigil" validate '')"
pass

#!/bin/sh
# policy-docs-corpus.sh - the policy gate on a documentation corpus:
# the examples of a tldr-pages checkout (pages/common and pages/linux).
#
#   bench/policy-docs-corpus.sh PATH/TO/tldr [VIGIL]
#
# Each example line (`...`) becomes one command: {{placeholder}} is
# unwrapped, and the alternatives [-x|--long] and [a|b] become their
# second form.  Prints the number of commands, how many are denied,
# how many of those use sudo or do not parse (not shell: key sequences,
# SQL), and the denials by rule, most first; with DENIED=FILE the denied
# commands (one per line, rule first) are written to FILE for reading.
# Without a checkout (as `make bench` runs it) it says so and exits 0:
# the pages are not part of vigil and are not fetched.
set -eu
if [ $# -lt 1 ]; then
	echo "skipped: no tldr-pages checkout given (usage: $0 PATH/TO/tldr [VIGIL])"
	exit 0
fi
tldr=$1
here=$(cd "$(dirname "$0")/.." && pwd)
vigil=${2:-$here/build/vigil}
[ -d "$tldr/pages/common" ] || { echo "$0: $tldr/pages/common: no such directory" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat "$tldr"/pages/common/*.md "$tldr"/pages/linux/*.md |
	sed -n 's/^`\(.*\)`$/\1/p' |
	sed -e 's/{{\([^}]*\)}}/\1/g' \
	    -e 's/\[\(-[^]|]*\)|\(-[^]|]*\)\]/\2/g' \
	    -e 's/\[\([a-zA-Z0-9_-]*\)|\([a-zA-Z0-9_ -]*\)\]/\2/g' >"$work/cmds"
VIGIL_HOME=$work/home "$vigil" check --stdin --json <"$work/cmds" \
	>"$work/out.json" || true
python3 - "$work/out.json" "${DENIED:-}" <<'PY'
import collections, json, sys
n = denied = sudo = parse = 0
rules = collections.Counter()
keep = []
for line in open(sys.argv[1], encoding='utf-8'):
    o = json.loads(line)
    n += 1
    if o['verdict'] != 'deny':
        continue
    denied += 1
    r = [f['rule'] for f in o['findings']]
    if 'builtin:priv-wrapper' in r:
        sudo += 1
    elif 'builtin:parse' in r:
        parse += 1
    else:
        rules[r[0]] += 1
        keep.append(r[0] + '\t' + o['command'])
print(f"commands {n}, denied {denied}: {sudo} through sudo and the like, "
      f"{parse} not shell, {denied - sudo - parse} by rule:")
for rule, k in rules.most_common():
    print(f"  {k:5d} {rule}")
if sys.argv[2]:
    open(sys.argv[2], 'w').write('\n'.join(sorted(keep)) + '\n')
PY

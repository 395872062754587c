#!/bin/sh
# ${{ }} in a string command: hostile matrix values ('"; touch F; "',
# $(touch F), backquotes, a quote, a newline) stay data outside quotes,
# inside double and single quotes, inside $( ) within double quotes and in
# a comment: each task prints its value back and nothing runs.  Places
# where no quoting is sure (a here-document, backquotes) are refused by
# validate at the ${{, with the variable to use instead.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/q.yaml" <<Y
version: 1
name: quoting
matrix:
  v: ['"; touch $W/pwned1; "', '\$(touch $W/pwned2)', '\`touch $W/pwned3\`',
      "it's", "a\\nb; touch $W/pwned4"]
command: |
  printf '%s\n' "dq=\${{ matrix.v }}" 'sq=\${{ matrix.v }}'
  printf '%s\n' plain=\${{ matrix.v }} "\$(printf %s "cs=\${{ matrix.v }}")"
  : comment \${{ matrix.v }}
  [ "\$VIGIL_MATRIX_V" = \${{ matrix.v }} ] || echo MISMATCH
Y
"$VIGIL" run -q "$W/q.yaml" >"$W/out" 2>&1 || fail "run: $(cat "$W/out")"
for f in 1 2 3 4; do
	[ ! -e "$W/pwned$f" ] || fail "a matrix value ran: pwned$f"
done
i=0
for v in '"; touch '"$W"'/pwned1; "' '$(touch '"$W"'/pwned2)' \
    '`touch '"$W"'/pwned3`' "it's" "a
b; touch $W/pwned4"; do
	printf 'dq=%s\nsq=%s\nplain=%s\ncs=%s\n' "$v" "$v" "$v" "$v" \
	    >"$W/want"
	"$VIGIL" logs "last/$i" >"$W/got" 2>&1 || fail "logs $i"
	cmp -s "$W/want" "$W/got" ||
	    fail "task $i printed: $(cat "$W/got")"
	i=$((i + 1))
done

# Unsafe places are refused at load, each at its ${{.
cat >"$W/u.yaml" <<'Y'
version: 1
matrix: {v: [a]}
env: {E: e}
command: |
  cat <<EOF
  ${{ matrix.v }}
  EOF
  echo `echo ${{ env.E }}` "$(( ${{ task.index }} + 1 ))"
Y
"$VIGIL" validate "$W/u.yaml" >/dev/null 2>"$W/err"
expect_eq "validate exit" 2 $?
grep -q "^$W/u.yaml:6:3: error: '\${{ }}' inside a here-document in 'command': its value could run as a command there; use \"\$VIGIL_MATRIX_V\" instead$" \
    "$W/err" || fail "here-document: $(cat "$W/err")"
grep -q "^$W/u.yaml:8:14: error: '\${{ }}' inside backquotes in 'command': .*use \"\$E\" instead$" \
    "$W/err" || fail "backquotes: $(cat "$W/err")"
grep -q "^$W/u.yaml:8:[2-9][0-9]: " "$W/err" && fail "task.index refused"
pass

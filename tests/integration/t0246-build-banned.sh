#!/bin/sh
# t0246-build-banned: the C library calls common/banned.h bans are
# compile errors in every compile of vigil's own sources.  A file using
# strcpy, sprintf, strcat, gets or strtok fails with "poisoned"; the same
# file with snprintf compiles; and every compile rule of the Makefile and
# of mk/*.mk passes the header (CPPFLAGS, SHIM_CPPFLAGS).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cc=${CC:-cc}
fail=0
for call in 'strcpy(b, "x")' 'sprintf(b, "x")' 'strcat(b, "x")' \
    'strtok(b, " ")' 'tmpnam(b)'; do
	printf '#include <string.h>\n#include <stdio.h>\nint f(char *b) { return %s != 0; }\n' \
	    "$call" >"$w/bad.c"
	if (cd "$root" && $cc -std=c11 -D_GNU_SOURCE -I. -include common/banned.h \
	    -c -o "$w/bad.o" "$w/bad.c") >"$w/out" 2>&1; then
		echo "FAIL: $call compiled"
		fail=1
	elif ! grep -q poisoned "$w/out"; then
		echo "FAIL: $call: not refused as banned:"; cat "$w/out"
		fail=1
	fi
done
printf '#include <string.h>\n#include <stdio.h>\nint f(char *b) { return snprintf(b, 2, "x"); }\n' >"$w/good.c"
(cd "$root" && $cc -std=c11 -D_GNU_SOURCE -I. -include common/banned.h \
    -c -o "$w/good.o" "$w/good.c") || { echo "FAIL: snprintf refused"; fail=1; }
# Every compile rule takes the header.
grep -q '^CPPFLAGS.*-include common/banned.h' "$root/Makefile" ||
	{ echo "FAIL: CPPFLAGS lacks -include common/banned.h"; fail=1; }
n=$(grep -c '^SHIM_CPPFLAGS.*:=' "$root/mk/shim.mk")
m=$(grep -c '^SHIM_CPPFLAGS.*-include common/banned.h' "$root/mk/shim.mk")
[ "$n" = "$m" ] && [ "$n" -gt 0 ] ||
	{ echo "FAIL: SHIM_CPPFLAGS without the header ($m of $n)"; fail=1; }
# (a rule that compiles names -c or a .c source; links and probes do not)
rules=$(grep -n '\(\$(CC)\|\$(SHIM_CC)\|clang \).*\( -c \|\$<\)' \
    "$root/Makefile" "$root"/mk/*.mk | grep -v 'CPPFLAGS')
[ -z "$rules" ] || { echo "FAIL: a compile rule without CPPFLAGS:"; \
    echo "$rules"; fail=1; }
[ "$fail" = 0 ] && echo "ok: banned calls refused at compile time"
exit "$fail"

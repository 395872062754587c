#!/bin/sh
# embed.sh NAME FILE - prints a C file defining `const char NAME[]` (the
# bytes of FILE, NUL-terminated) and `const unsigned long NAME_len` (its
# length without the NUL), to build a file such as the report page into
# vigil (mk/report.mk).  POSIX od and sed only.
set -eu
name=$1
file=$2
printf '/* Generated from %s by scripts/embed.sh; do not edit. */\n' "$file"
printf 'extern const char %s[];\nextern const unsigned long %s_len;\n' \
    "$name" "$name"
printf 'const char %s[] = {\n' "$name"
od -An -v -tx1 "$file" | sed -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' \
    -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
printf '0x00\n};\nconst unsigned long %s_len = sizeof(%s) - 1;\n' \
    "$name" "$name"

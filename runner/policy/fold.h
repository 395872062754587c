/*
 * fold.h - the command text script code hands a command runner, folded
 * from its constants (fold.c); what cannot be folded is opaque code.
 */
#ifndef VG_POLICY_FOLD_H
#define VG_POLICY_FOLD_H

#include <stddef.h>

#include "runner/policy/actx.h"

/* Scans code of language lang (the light scan's names: python, perl,
 * ruby, node, php, lua, awk, r) again as that language. */
typedef void (*pl_code_scan_fn)(struct pl_an *an, const char *lang,
    const char *code, size_t len, size_t off, size_t slen);

/* Finds every command runner in code and judges what it is given:
 * folded text as shell (code_scan for eval of the same language),
 * anything else as opaque code (floor:opaque-code). */
void	pl_fold_runners(struct pl_an *an, const char *lang, const char *code,
	    size_t len, size_t off, size_t slen, pl_code_scan_fn code_scan);

#endif

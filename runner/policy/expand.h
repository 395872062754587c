/*
 * expand.h - word expansion (expand.c) as the analyser uses it: a word
 * of the syntax tree becomes fields (parameters with known values,
 * command substitutions analysed, brace expansion, field splitting),
 * with unknown bytes marked PL_UNK and their taint carried along.
 */
#ifndef VG_POLICY_EXPAND_H
#define VG_POLICY_EXPAND_H

#include "runner/policy/actx.h"

struct pl_word;

/* Appends the fields of w to *out (n used, cap allocated, in the
 * arena).  Returns 0, or -1 over a limit. */
int	pl_expand_word(struct pl_an *an, struct pl_word *w,
	    struct pl_field **out, int *n, int *cap);
/* Expands w as one field, without splitting (assignments, redirection
 * targets).  Returns 0, or -1 over a limit. */
int	pl_expand_single(struct pl_an *an, struct pl_word *w,
	    struct pl_field *f);

#endif

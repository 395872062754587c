/*
 * nested.h - what nested-code analysis (nested.c) offers the
 * classifier: literal decoders (base64 -d, printf, xxd -r, rev ...)
 * whose output is known, and code handed to an interpreter (python,
 * perl, node, ruby ... or a shell) scanned for what it would do.
 */
#ifndef VG_POLICY_NESTED_H
#define VG_POLICY_NESTED_H

#include <stddef.h>

#include "runner/policy/actx.h"

/* When c is a decoder, fills out with its output and returns 1. */
int	pl_decode(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out);
/* Analyses code (a stream) given to interpreter lang by c. */
void	pl_code_to_interp(struct pl_an *an, struct pl_cmd *c,
	    const char *lang, struct pl_stream *code, size_t off,
	    size_t slen);

#endif

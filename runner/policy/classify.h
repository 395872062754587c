/*
 * classify.h - what the classifier offers: judging one expanded simple
 * command (classify.c, its handlers in classify-*.c) and a write to a
 * file, which redirections need too (classify-help.c), and the
 * normalised program name of a word.
 */
#ifndef VG_POLICY_CLASSIFY_H
#define VG_POLICY_CLASSIFY_H

#include <stddef.h>

#include "runner/policy/actx.h"

struct pl_arena;

/* Classifies c, adding findings and filling c->out. */
void	pl_classify(struct pl_an *an, struct pl_cmd *c);
/* Judges a write (append or truncate) to the file f names; why says
 * what writes. */
void	pl_classify_write(struct pl_an *an, const struct pl_field *f,
	    int append, const char *why);
/* The program name of a command word: basename, in the arena. */
const char *pl_prog_name(struct pl_arena *a, const char *s, size_t len);

#endif

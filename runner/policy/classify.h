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

/*
 * A program the classifier reads the way that program reads its words,
 * from outside the policy floor: a scheduler's commands (scancel, qdel,
 * ...) live in the scheduler's own file (schedulers/slurm-policy.c) and
 * reach the classifier through vg_plugins_init.  The handler uses the
 * helpers of runner/policy/classify-int.h.
 */
struct pl_prog {
	const char	*name;
	void		(*fn)(struct pl_an *an, struct pl_cmd *c);
};

/* Adds the programs of v (ended by a NULL name) to those the built-in
 * table does not name; a table given again is kept once.  Not for
 * threads: called at start, before any command is classified. */
void	pl_register_progs(const struct pl_prog *v);
/* Judges a write (append or truncate) to the file f names; why says
 * what writes. */
void	pl_classify_write(struct pl_an *an, const struct pl_field *f,
	    int append, const char *why);
/* The program name of a command word: basename, in the arena. */
const char *pl_prog_name(struct pl_arena *a, const char *s, size_t len);

#endif

/*
 * explain.h - filling a struct vg_explain (policy.h) from one analysis:
 * the syntax tree, the normalised simple commands, the findings and
 * what the rules made of them (explain.c).
 */
#ifndef VG_POLICY_EXPLAIN_H
#define VG_POLICY_EXPLAIN_H

#include "runner/policy/actx.h"
#include "runner/policy/parse.h"
#include "runner/policy/rules.h"

/* Fills x (zeroed but its verdict) from analysis an of the tree root
 * (NULL when the command did not parse); tr holds an->nfind entries. */
void	pl_explain_fill(struct vg_explain *x, struct pl_an *an,
	    const struct pl_node *root, const struct pl_trace *tr);

#endif

/*
 * explain.c - how one command was judged, for people: the parsed
 * structure, each simple command after expansion and unwrapping, each
 * finding and the rule that decided it.  Everything is copied out of
 * the analysis arena, which the next evaluation reuses.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runner/policy/explain.h"

/* The name of a node kind. */
static const char *
kind_name(int kind)
{
	static const char *const names[] = {
		[N_SIMPLE] = "simple", [N_PIPE] = "pipeline",
		[N_LIST] = "list", [N_SUBSHELL] = "subshell",
		[N_GROUP] = "group", [N_IF] = "if", [N_WHILE] = "while",
		[N_UNTIL] = "until", [N_FOR] = "for", [N_CASE] = "case",
		[N_CASEITEM] = "case item", [N_FUNC] = "function",
		[N_ARITH] = "arithmetic", [N_COND] = "[[ ]]",
	};

	if (kind < 0 || (size_t)kind >= sizeof(names) / sizeof(names[0]) ||
	    names[kind] == NULL)
		return "node";
	return names[kind];
}

/* The operator joining a list item to the next. */
static const char *
op_name(int op)
{
	switch (op) {
	case OP_BG:
		return "&";
	case OP_AND:
		return "&&";
	case OP_OR:
		return "||";
	default:
		return ";";
	}
}

/* Appends node n and its children, depth first. */
static void
add_nodes(struct vg_explain *x, const char *src, size_t *cap,
    const struct pl_node *n, int depth, int item)
{
	struct vg_explain_node *e;

	for (; n != NULL; n = n->next) {
		x->nodes = vg_xgrow(x->nodes, cap, x->nnodes + 1,
		    sizeof(*x->nodes));
		e = &x->nodes[x->nnodes++];
		e->depth = depth;
		e->kind = kind_name(n->kind);
		e->op = item && n->next != NULL ? op_name(n->op) : NULL;
		e->off = n->off;
		e->len = n->len;
		/* Spans may end in the blanks before an operator. */
		while (e->len > 0 && (src[e->off + e->len - 1] == ' ' ||
		    src[e->off + e->len - 1] == '\t'))
			e->len--;
		add_nodes(x, src, cap, n->kids, depth + 1, n->kind == N_LIST);
		if (depth == 0)
			break;
	}
}

/* Fills x from the analysis; see explain.h. */
void
pl_explain_fill(struct vg_explain *x, struct pl_an *an,
    const struct pl_node *root, const struct pl_trace *tr)
{
	static const char *const what[] = {
		[PL_TR_FLAGGED] = "flagged", [PL_TR_FLOOR] = "floor",
		[PL_TR_ALLOWED] = "allowed", [PL_TR_DENIED] = "denied",
	};
	const struct pl_normcmd *nc;
	size_t cap = 0, n = 0, i;
	int k;

	x->whole = vg_xcalloc(an->srclen + 1, 1);
	pl_norm_whole(an->src, an->srclen, x->whole);
	if (root != NULL)
		add_nodes(x, an->src, &cap, root, 0, 0);
	/* The list is newest first. */
	for (nc = an->norms; nc != NULL; nc = nc->next)
		n++;
	x->cmds = vg_xcalloc(n + 1, sizeof(*x->cmds));
	x->ncmds = n;
	for (nc = an->norms, i = n; nc != NULL; nc = nc->next) {
		struct vg_explain_cmd *c = &x->cmds[--i];

		c->off = nc->off;
		c->len = nc->len;
		c->norm = vg_xstrdup(nc->s);
		c->nested = nc->nest > 0;
	}
	x->finds = vg_xcalloc((size_t)an->nfind + 1, sizeof(*x->finds));
	x->nfinds = (size_t)an->nfind;
	for (k = 0; k < an->nfind; k++) {
		const struct pl_finding *f = &an->find[k];
		struct vg_explain_find *o = &x->finds[k];

		o->category = f->category;
		o->rule = vg_xstrdup(f->rule);
		o->floor = f->floor;
		o->reason = vg_xstrdup(f->reason);
		o->off = f->off;
		o->len = f->len;
		o->url = f->url != NULL && f->urls == 1 ? vg_xstrdup(f->url) :
		    NULL;
		o->decision = what[tr[k].what];
		o->by = vg_xstrdup(tr[k].by);
		o->lifted = vg_xstrdup(tr[k].lifted);
	}
}

void
vg_explain_release(struct vg_explain *x)
{
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->ncmds; i++)
		free(x->cmds[i].norm);
	for (i = 0; i < x->nfinds; i++) {
		free(x->finds[i].rule);
		free(x->finds[i].reason);
		free(x->finds[i].url);
		free(x->finds[i].by);
		free(x->finds[i].lifted);
	}
	free(x->whole);
	free(x->nodes);
	free(x->cmds);
	free(x->finds);
	memset(x, 0, sizeof(*x));
}

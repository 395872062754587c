/*
 * yaml-tree.c - libyaml events to a vg_ynode tree, with limits.
 *
 * Aliases point at the anchored node itself, so the tree is a DAG whose
 * nodes all live in one list owned by struct vg_ytree.  Every node keeps
 * its "weight" (how many nodes it stands for once aliases are expanded);
 * each alias adds the weight of its target to a budget, which is what
 * stops exponential alias bombs before anyone walks them.  What the
 * scalars mean is left to schema.c.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "runner/manifest/yaml-tree.h"

struct frame {
	struct vg_ynode	*node;
	struct vg_ynode	*key;		/* MAP: key waiting for its value */
};

struct anchor {
	char		*name;
	struct vg_ynode	*node;
};

struct builder {
	const char		*name;
	const char		*text;		/* the YAML parsed */
	size_t			 len;
	struct vg_ytree		*t;
	struct vg_diag		*d;
	struct vg_ylimits	 lim;
	struct frame		*stack;		/* max_depth + 1 frames */
	int			 depth;
	struct anchor		*anchors;
	size_t			 nanchors;
	size_t			 alias_total;
	int			 docs;
	int			 dups;
};

/* Adds a + b without overflow (weights only need to be compared). */
static size_t
sat_add(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

struct vg_ynode *
vg_ytree_node(struct vg_ytree *t, enum vg_ynode_kind kind)
{
	struct vg_ynode *n = vg_xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->weight = 1;
	n->done = 1;
	t->all = vg_xgrow(t->all, &t->capall, t->nall + 1, sizeof(*t->all));
	t->all[t->nall++] = n;
	return n;
}

void
vg_ynode_push(struct vg_ynode *parent, struct vg_ynode *child)
{
	parent->items = vg_xgrow(parent->items, &parent->cap, parent->n + 1,
	    sizeof(*parent->items));
	parent->items[parent->n++] = child;
}

void
vg_ynode_put(struct vg_ynode *map, struct vg_ynode *key,
    struct vg_ynode *value)
{
	map->items = vg_xgrow(map->items, &map->cap, 2 * map->n + 2,
	    sizeof(*map->items));
	map->items[2 * map->n] = key;
	map->items[2 * map->n + 1] = value;
	map->n++;
}

void
vg_ytree_free(struct vg_ytree *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nall; i++) {
		free(t->all[i]->str);
		free(t->all[i]->items);
		free(t->all[i]);
	}
	free(t->all);
	free(t);
}

int
vg_ynode_is_null(const struct vg_ynode *n)
{
	if (n == NULL)
		return 1;
	if (n->kind != VG_Y_SCALAR || n->style != VG_YS_PLAIN)
		return 0;
	return n->len == 0 || strcmp(n->str, "~") == 0 ||
	    strcasecmp(n->str, "null") == 0;
}

const struct vg_ynode *
vg_ynode_get(const struct vg_ynode *n, const char *key)
{
	size_t i;

	if (n == NULL || n->kind != VG_Y_MAP)
		return NULL;
	for (i = 0; i < n->n; i++)
		if (strcmp(n->items[2 * i]->str, key) == 0)
			return n->items[2 * i + 1];
	return NULL;
}

const char *
vg_ynode_kind_name(const struct vg_ynode *n)
{
	if (vg_ynode_is_null(n))
		return "empty";
	switch (n->kind) {
	case VG_Y_SCALAR:
		return "a string";
	case VG_Y_SEQ:
		return "a list";
	case VG_Y_MAP:
		return "a mapping";
	}
	return "?";
}

void
vg_ynode_loc_at(const struct vg_ynode *n, size_t off, const char *file,
    struct vg_loc *loc)
{
	size_t i, bol = 0;
	int lines = 0;

	loc->file = file;
	loc->line = n->line;
	loc->col = n->col;
	if (n->line > 0 && n->one_line && off <= n->len)
		loc->col += (int)off + (n->style == VG_YS_QUOTED);
	if (n->line > 0 && n->block_col > 0 && off < n->len) {
		/* A literal block: its text is its lines, less the
		 * indentation. */
		for (i = 0; i < off; i++)
			if (n->str[i] == '\n') {
				lines++;
				bol = i + 1;
			}
		loc->line = n->line + 1 + lines;
		loc->col = n->block_col + (int)(off - bol);
	}
}

/* The place of a libyaml mark (0-based); the first line's columns are
 * shifted when the text is part of a longer line (--set). */
static struct vg_loc
mark_loc(const struct builder *b, const yaml_mark_t *m)
{
	return (struct vg_loc){ b->name, (int)m->line + 1,
	    (int)m->column + 1 + (m->line == 0 ? b->lim.col_shift : 0) };
}

/* Reports a problem at a libyaml mark. */
static void
diag_at(struct builder *b, const yaml_mark_t *m, const char *msg)
{
	struct vg_loc loc = mark_loc(b, m);

	vg_diag_add(b->d, &loc, "%s", msg);
}

/* Converts a byte offset to a line and column (reader errors). */
static void
offset_loc(const char *text, size_t len, size_t off, struct vg_loc *loc)
{
	size_t i;

	loc->line = 1;
	loc->col = 1;
	for (i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			loc->line++;
			loc->col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			loc->col++;
		}
	}
}

/* The start of 1-based line n of text (len bytes), or NULL. */
static const char *
line_at(const char *text, size_t len, int n)
{
	const char *p = text, *end = text + len;

	while (--n > 0 && p != NULL)
		if ((p = memchr(p, '\n', (size_t)(end - p))) != NULL)
			p++;
	return p != NULL && p < end ? p : NULL;
}

/* Leading spaces of the line at p. */
static int
indent_of(const char *p, const char *end)
{
	int n = 0;

	while (p < end && *p++ == ' ')
		n++;
	return n;
}

/*
 * For a key indented unlike the key before it (libyaml then says
 * "mapping values are not allowed" or "did not find expected key"):
 * appends "\nhint: 'KEY' is indented N spaces; its siblings M" to msg.
 * The key before is its sibling unless it opens a block (ends in ':').
 */
static void
indent_hint(const char *text, size_t len, int line, struct vg_buf *msg)
{
	const char *end = text + len, *p = line_at(text, len, line), *q, *k;
	const char *prev = NULL, *e;
	int n, m, l;

	if (p == NULL)
		return;
	n = indent_of(p, end);
	k = p + n;
	q = k + strcspn(k, ":\n");
	if (q >= end || *q != ':' || q == k || *k == '#' || *k == '-')
		return;
	for (l = line - 1; l > 0 && prev == NULL; l--) {
		prev = line_at(text, len, l);
		m = prev != NULL ? indent_of(prev, end) : 0;
		if (prev != NULL && (prev[m] == '\n' || prev[m] == '#' ||
		    prev + m >= end))
			prev = NULL;
	}
	if (prev == NULL)
		return;
	m = indent_of(prev, end);
	/* Its last character, comments and blanks aside: ':' opens a
	 * block, so the line is the key's parent. */
	e = prev + strcspn(prev, "\n");
	q = memchr(prev, '#', (size_t)(e - prev));
	if (q != NULL && q > prev && (q[-1] == ' ' || q[-1] == '\t'))
		e = q;
	while (e > prev && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (m == n || (e > prev && e[-1] == ':') || prev[m] == '-')
		return;
	q = k + strcspn(k, ":\n");
	vg_buf_printf(msg, "\nhint: '%.*s' is indented %d space%s; its "
	    "siblings %d", (int)(q - k), k, n, n == 1 ? "" : "s", m);
}

/* Reports libyaml's own error with its position. */
static void
syntax_error(struct builder *b, const yaml_parser_t *p, const char *text,
    size_t len)
{
	struct vg_loc loc = { b->name, 0, 0 }, cm;
	const char *problem = p->problem ? p->problem : "syntax error";
	struct vg_buf hint = VG_BUF_INIT;
	char ctx[200] = "";
	size_t idx;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		vg_diag_add(b->d, &loc, "out of memory parsing YAML");
		return;
	case YAML_READER_ERROR:
		if (!b->lim.no_positions)
			offset_loc(text, len, p->problem_offset, &loc);
		if (loc.line == 1)
			loc.col += b->lim.col_shift;
		vg_diag_add(b->d, &loc, "invalid YAML: %s", problem);
		return;
	default:
		break;
	}
	loc = mark_loc(b, &p->problem_mark);
	cm = mark_loc(b, &p->context_mark);
	idx = p->problem_mark.index;
	/* At the end of a text without a final newline, libyaml counts a
	 * line more: place the problem after the last character. */
	if (idx >= len && len > 0 && text[len - 1] != '\n' &&
	    !b->lim.no_positions) {
		offset_loc(text, len, len, &loc);
		if (loc.line == 1)
			loc.col += b->lim.col_shift;
	}
	if (b->lim.no_positions) {
		/* A stored record (JSON) has no places worth giving. */
		loc.line = 0;
		if (p->context != NULL)
			snprintf(ctx, sizeof(ctx), " (%s)", p->context);
	} else if (p->context != NULL && (cm.line != loc.line ||
	    cm.col != loc.col))
		snprintf(ctx, sizeof(ctx), " (%s that starts at line %d, "
		    "column %d)", p->context, cm.line, cm.col);
	else if (p->context != NULL)
		snprintf(ctx, sizeof(ctx), " (%s)", p->context);
	if (!b->lim.no_positions && b->lim.col_shift == 0 && (strcmp(problem,
	    "mapping values are not allowed in this context") == 0 ||
	    strcmp(problem, "did not find expected key") == 0))
		indent_hint(text, len, loc.line, &hint);
	/* libyaml's index counts characters; good enough to spot a tab. */
	if (idx < len && text[idx] == '\t')
		vg_diag_add(b->d, &loc, "invalid YAML: %s%s; indent with "
		    "spaces, not tabs", problem, ctx);
	else
		vg_diag_add(b->d, &loc, "invalid YAML: %s%s%s", problem, ctx,
		    vg_buf_str(&hint));
	vg_buf_release(&hint);
}

/* Records anchor name for node n; later definitions win. */
static int
anchor_add(struct builder *b, const yaml_char_t *name, struct vg_ynode *n,
    const yaml_mark_t *m)
{
	if (name == NULL)
		return 0;
	if (b->nanchors >= VG_YAML_MAX_ANCHORS) {
		diag_at(b, m, "too many anchors (limit 1000)");
		return VG_ELIMIT;
	}
	b->anchors = vg_xrealloc(b->anchors,
	    (b->nanchors + 1) * sizeof(*b->anchors));
	b->anchors[b->nanchors].name = vg_xstrdup((const char *)name);
	b->anchors[b->nanchors].node = n;
	b->nanchors++;
	return 0;
}

/* Finds the node an alias refers to (the latest anchor of that name). */
static struct vg_ynode *
anchor_find(struct builder *b, const char *name)
{
	size_t i;

	for (i = b->nanchors; i-- > 0;)
		if (strcmp(b->anchors[i].name, name) == 0)
			return b->anchors[i].node;
	return NULL;
}

/* A new node at mark m, counted against the node limit. */
static struct vg_ynode *
node_new(struct builder *b, enum vg_ynode_kind kind, const yaml_mark_t *m)
{
	struct vg_loc loc = mark_loc(b, m);
	struct vg_ynode *n;

	if (b->t->nall >= b->lim.max_nodes) {
		vg_diag_add(b->d, &loc, "too many YAML nodes (limit %zu)",
		    b->lim.max_nodes);
		return NULL;
	}
	n = vg_ytree_node(b->t, kind);
	if (!b->lim.no_positions) {
		n->line = loc.line;
		n->col = loc.col;
	}
	return n;
}

/* Attaches n to the open collection on top of the stack, or as root. */
static int
attach(struct builder *b, struct vg_ynode *n, const yaml_mark_t *m)
{
	struct frame *f;

	if (b->depth == 0) {
		b->t->root = n;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	if (f->node->kind == VG_Y_SEQ) {
		vg_ynode_push(f->node, n);
		return 0;
	}
	if (f->key == NULL) {
		if (n->kind != VG_Y_SCALAR) {
			diag_at(b, m, "mapping keys must be plain strings");
			return VG_EPARSE;
		}
		f->key = n;
		return 0;
	}
	vg_ynode_put(f->node, f->key, n);
	f->key = NULL;
	return 0;
}

/* Orders key indices of map arg by key text, then by position. */
static int
key_cmp(const void *a, const void *b, void *arg)
{
	const struct vg_ynode *map = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(map->items[2 * i]->str, map->items[2 * j]->str);

	if (c != 0)
		return c;
	return (i > j) - (i < j);
}

/* Orders indices ascending. */
static int
idx_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	return (i > j) - (i < j);
}

/* Reports and drops duplicate keys of a finished map (n log n). */
static void
map_dedup(struct builder *b, struct vg_ynode *map)
{
	size_t *order, *first, *dup, ndup = 0, i, j, k;
	struct vg_loc loc;
	const struct vg_ynode *key, *orig;

	if (map->n < 2)
		return;
	order = vg_xmalloc(map->n * sizeof(*order));
	first = vg_xmalloc(map->n * sizeof(*first));
	dup = vg_xmalloc(map->n * sizeof(*dup));
	for (i = 0; i < map->n; i++)
		order[i] = first[i] = i;
	qsort_r(order, map->n, sizeof(*order), key_cmp, map);
	for (i = 1; i < map->n; i++) {
		if (strcmp(map->items[2 * order[i]]->str,
		    map->items[2 * order[i - 1]]->str) != 0)
			continue;
		first[order[i]] = first[order[i - 1]];
		dup[ndup++] = order[i];
	}
	if (ndup == 0)
		goto out;
	qsort(dup, ndup, sizeof(*dup), idx_cmp);
	for (i = 0; i < ndup; i++) {
		key = map->items[2 * dup[i]];
		orig = map->items[2 * first[dup[i]]];
		loc = (struct vg_loc){ b->name, key->line, key->col };
		if (orig->line > 0)
			vg_diag_add(b->d, &loc, "duplicate key '%s' (first at "
			    "line %d, column %d)", key->str, orig->line,
			    orig->col);
		else
			vg_diag_add(b->d, &loc, "duplicate key '%s'", key->str);
		b->dups++;
	}
	/* Keep the first of each key, in document order. */
	for (i = 0, j = 0, k = 0; i < map->n; i++) {
		if (k < ndup && dup[k] == i) {
			k++;
			continue;
		}
		map->items[2 * j] = map->items[2 * i];
		map->items[2 * j + 1] = map->items[2 * i + 1];
		j++;
	}
	map->n = j;
out:
	free(order);
	free(first);
	free(dup);
}

/*
 * The 1-based column where the lines of the literal block scalar whose
 * '|' is at m start (its first line that is not blank sets the
 * indentation), or 0 when it cannot be told (an indentation indicator, a
 * --set).
 */
static int
block_col(const struct builder *b, const yaml_mark_t *m)
{
	const char *p, *end = b->text + b->len;
	int indent;

	size_t line = 0, col = 0;

	if (b->lim.no_positions || b->lim.col_shift != 0)
		return 0;
	/* libyaml's marks count characters: walk lines, then UTF-8. */
	for (p = b->text; p < end && line < m->line; p++)
		if (*p == '\n')
			line++;
	for (; p < end && col < m->column; p++)
		if (p + 1 == end || ((unsigned char)p[1] & 0xc0) != 0x80)
			col++;
	if (p >= end || *p != '|')
		return 0;
	p++;
	while (p < end && (*p == '-' || *p == '+'))
		p++;
	if (p < end && isdigit((unsigned char)*p))
		return 0;
	if ((p = memchr(p, '\n', (size_t)(end - p))) == NULL)
		return 0;
	for (p++; p < end; p++) {
		for (indent = 0; p < end && *p == ' '; p++)
			indent++;
		if (p < end && *p != '\n' && *p != '\r')
			return indent + 1;
		if ((p = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return 0;
	}
	return 0;
}

/* Handles one event; returns 0, 1 at the end of the stream, or < 0. */
static int
event(struct builder *b, const yaml_event_t *ev)
{
	struct vg_ynode *n;
	const yaml_mark_t *m = &ev->start_mark;
	struct vg_loc loc;
	size_t i, w;
	int rc;

	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1) {
			diag_at(b, m, "more than one YAML document (remove "
			    "the '---' separator)");
			return VG_EPARSE;
		}
		return 0;
	case YAML_SCALAR_EVENT:
		if ((n = node_new(b, VG_Y_SCALAR, m)) == NULL)
			return VG_ELIMIT;
		n->str = vg_xstrndup((const char *)ev->data.scalar.value,
		    ev->data.scalar.length);
		n->len = ev->data.scalar.length;
		switch (ev->data.scalar.style) {
		case YAML_SINGLE_QUOTED_SCALAR_STYLE:
		case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
			n->style = VG_YS_QUOTED;
			n->one_line = ev->end_mark.line == m->line &&
			    ev->end_mark.index - m->index == n->len + 2;
			break;
		case YAML_LITERAL_SCALAR_STYLE:
			n->block_col = block_col(b, m);
			/* fall through */
		case YAML_FOLDED_SCALAR_STYLE:
			n->style = VG_YS_BLOCK;
			break;
		default:
			n->style = VG_YS_PLAIN;
			n->one_line = ev->end_mark.line == m->line &&
			    ev->end_mark.index - m->index == n->len;
			break;
		}
		if ((rc = anchor_add(b, ev->data.scalar.anchor, n, m)) != 0)
			return rc;
		return attach(b, n, m);
	case YAML_ALIAS_EVENT:
		n = anchor_find(b, (const char *)ev->data.alias.anchor);
		if (n == NULL) {
			diag_at(b, m, "alias refers to an unknown anchor");
			return VG_EPARSE;
		}
		if (!n->done) {
			diag_at(b, m, "alias refers to a node that contains "
			    "it (recursive alias)");
			return VG_EPARSE;
		}
		b->alias_total = sat_add(b->alias_total, n->weight);
		if (b->alias_total > b->lim.max_alias_nodes) {
			loc = mark_loc(b, m);
			vg_diag_add(b->d, &loc, "aliases expand to more "
			    "than %zu nodes (alias bomb?)",
			    b->lim.max_alias_nodes);
			return VG_ELIMIT;
		}
		return attach(b, n, m);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth >= b->lim.max_depth) {
			loc = mark_loc(b, m);
			vg_diag_add(b->d, &loc, "nesting deeper than %d "
			    "levels", b->lim.max_depth);
			return VG_ELIMIT;
		}
		n = node_new(b, ev->type == YAML_SEQUENCE_START_EVENT ?
		    VG_Y_SEQ : VG_Y_MAP, m);
		if (n == NULL)
			return VG_ELIMIT;
		n->done = 0;
		rc = anchor_add(b, ev->type == YAML_SEQUENCE_START_EVENT ?
		    ev->data.sequence_start.anchor :
		    ev->data.mapping_start.anchor, n, m);
		if (rc != 0 || (rc = attach(b, n, m)) != 0)
			return rc;
		b->stack[b->depth].node = n;
		b->stack[b->depth].key = NULL;
		b->depth++;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		n = b->stack[--b->depth].node;
		if (n->kind == VG_Y_MAP)
			map_dedup(b, n);
		w = 1;
		for (i = 0; i < (n->kind == VG_Y_MAP ? 2 * n->n : n->n); i++)
			w = sat_add(w, n->items[i]->weight);
		n->weight = w;
		n->done = 1;
		return 0;
	default:
		return 0;
	}
}

int
vg_ytree_parse(const char *name, const char *text, size_t len,
    const struct vg_ylimits *lim, struct vg_ytree **tp, int *dups,
    struct vg_diag *d)
{
	struct builder b;
	yaml_parser_t p;
	yaml_event_t ev;
	size_t i;
	int rc = 0;

	*tp = NULL;
	if (dups != NULL)
		*dups = 0;
	memset(&b, 0, sizeof(b));
	b.name = name;
	b.text = text;
	b.len = len;
	b.d = d;
	if (lim != NULL)
		b.lim = *lim;
	if (b.lim.max_bytes == 0)
		b.lim.max_bytes = VG_YAML_MAX_BYTES;
	if (b.lim.max_depth <= 0)
		b.lim.max_depth = VG_YAML_MAX_DEPTH;
	if (b.lim.max_alias_nodes == 0)
		b.lim.max_alias_nodes = VG_YAML_MAX_ALIAS_NODES;
	if (b.lim.max_nodes == 0)
		b.lim.max_nodes = VG_YAML_MAX_NODES;
	if (len > b.lim.max_bytes) {
		vg_diag_add(d, &(struct vg_loc){ name, 1, 1 }, "larger than "
		    "the limit of %zu bytes", b.lim.max_bytes);
		return VG_ELIMIT;
	}
	b.t = vg_xcalloc(1, sizeof(*b.t));
	b.stack = vg_xcalloc((size_t)b.lim.max_depth + 1, sizeof(*b.stack));
	if (!yaml_parser_initialize(&p)) {
		vg_diag_add(d, NULL, "out of memory parsing YAML");
		rc = VG_ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			syntax_error(&b, &p, text, len);
			rc = VG_EPARSE;
			break;
		}
		rc = event(&b, &ev);
		yaml_event_delete(&ev);
		if (rc != 0)
			break;
	}
	if (rc == 1)
		rc = 0;
	yaml_parser_delete(&p);
out:
	for (i = 0; i < b.nanchors; i++)
		free(b.anchors[i].name);
	free(b.anchors);
	free(b.stack);
	if (rc != 0) {
		vg_ytree_free(b.t);
		return rc;
	}
	if (dups != NULL)
		*dups = b.dups;
	*tp = b.t;
	return 0;
}

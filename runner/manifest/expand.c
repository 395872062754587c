/*
 * expand.c - a manifest's matrix to tasks, and ${{ ... }} substitution.
 *
 * Order: the cartesian product of the axes in declaration order, the last
 * axis changing fastest, without the combinations an exclude matches
 * (every key of the exclude equal), then the includes (GitHub Actions
 * semantics): an include whose axis keys all equal those of a remaining
 * combination adds its other keys to that combination (later includes
 * overwrite keys added by earlier ones, never axis values); an include
 * that matches no combination becomes a task of its own, after all
 * others.  Without axes every include is a task; without a matrix there
 * is one task.
 *
 * Substitution: values go into a string command quoted for the place
 * they take in its shell syntax (sub-shell.c): one word outside quotes,
 * escaped inside double or single quotes, so a matrix value is never
 * shell syntax; into argv elements and env values they go verbatim.  A
 * resources value holding ${{ matrix.NAME }} or ${{ task.index }}
 * (vg_resources.tmpl) is substituted verbatim and decoded with its row's
 * type and range into the task's own resources; vg_expand_check tries
 * every task's values when the manifest is loaded.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/secrets.h"
#include "runner/manifest/manifest-int.h"
#include "runner/manifest/task.h"

/* ---- templates ---- */

/* Skips blanks. */
static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Length of a name at p ([A-Za-z0-9_-]). */
static size_t
name_len(const char *p, const char *end)
{
	const char *s = p;

	while (s < end && (isalnum((unsigned char)*s) || *s == '_' ||
	    *s == '-'))
		s++;
	return (size_t)(s - p);
}

int
vg_sub_split(const char *s, struct vg_sub_seg **segs, size_t *n, size_t *bad,
    const char **why)
{
	static const char unknown[] = "unknown expression in '${{ }}' "
	    "(expected matrix.NAME, env.NAME or task.index)";
	struct vg_sub_seg *v = NULL;
	size_t nv = 0, cap = 0, nl, nbad = 0;
	const char *p = s, *open, *close, *q, *end, *w;
	enum vg_sub_kind kind;

	while (*p != '\0') {
		open = strstr(p, "${{");
		if (open == NULL)
			open = p + strlen(p);
		if (open > p) {
			v = vg_xgrow(v, &cap, nv + 1, sizeof(*v));
			v[nv++] = (struct vg_sub_seg){ .kind = VG_SUB_TEXT,
			    .off = (size_t)(p - s), .len = (size_t)(open - p),
			    .at = (size_t)(p - s) };
		}
		if (*open == '\0')
			break;
		close = strstr(open + 3, "}}");
		w = NULL;
		kind = VG_SUB_BAD;
		nl = 0;
		q = open + 3;
		if (close == NULL) {
			w = "unterminated '${{' (no closing '}}')";
		} else {
			q = skip_ws(open + 3, close);
			end = close;
			while (end > q && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			if ((size_t)(end - q) > 7 &&
			    strncmp(q, "matrix.", 7) == 0) {
				kind = VG_SUB_MATRIX;
				q += 7;
			} else if ((size_t)(end - q) > 4 &&
			    strncmp(q, "env.", 4) == 0) {
				kind = VG_SUB_ENV;
				q += 4;
			} else if ((size_t)(end - q) == 10 &&
			    strncmp(q, "task.index", 10) == 0) {
				kind = VG_SUB_INDEX;
				q += 10;
			}
			nl = kind == VG_SUB_INDEX ? 0 : name_len(q, end);
			if (kind == VG_SUB_BAD || q + nl != end ||
			    (kind != VG_SUB_INDEX && nl == 0))
				w = unknown;
		}
		v = vg_xgrow(v, &cap, nv + 1, sizeof(*v));
		if (w != NULL) {
			if (nbad++ == 0) {
				*bad = (size_t)(open - s);
				*why = w;
			}
			v[nv++] = (struct vg_sub_seg){ .kind = VG_SUB_BAD,
			    .off = (size_t)(open - s), .at = (size_t)(open - s),
			    .why = w };
		} else {
			v[nv++] = (struct vg_sub_seg){ .kind = kind,
			    .off = (size_t)(q - s), .len = nl,
			    .at = (size_t)(open - s) };
		}
		/* Nothing after an unterminated one can be told apart. */
		if (close == NULL)
			break;
		p = close + 2;
	}
	*segs = v;
	*n = nv;
	return nbad > 0 ? VG_EINVAL : 0;
}

/* ---- walking the combinations ---- */

enum { NEVER = -2, ANY = -1 };

struct walker {
	const struct vg_manifest *m;
	const struct vg_matrix	*mx;
	long			*exc;		/* nexclude x naxes */
	long			*inc;		/* ninclude x naxes */
	unsigned char		*inc_hit;	/* include matched something */
	unsigned char		*matched;	/* includes matching combo */
	size_t			*idx;		/* value index per axis */
	size_t			 product;	/* saturated */
	size_t			 combo;		/* number of the current
						   combination (walk) */
};

/* Index of name among the axes, or -1. */
static long
axis_of(const struct vg_matrix *mx, const char *name)
{
	size_t a;

	for (a = 0; a < mx->naxes; a++)
		if (strcmp(mx->axes[a].name, name) == 0)
			return (long)a;
	return -1;
}

/* Value index of value on axis a, or NEVER. */
static long
value_of(const struct vg_matrix *mx, size_t a, const char *value)
{
	size_t v;

	for (v = 0; v < mx->axes[a].values.n; v++)
		if (strcmp(mx->axes[a].values.v[v], value) == 0)
			return (long)v;
	return NEVER;
}

/* Turns include/exclude maps into per-axis value indices. */
static void
patterns(const struct vg_matrix *mx, const struct vg_kvs *v, size_t n,
    long *out, int unknown_never)
{
	size_t i, j, a;
	long ax;

	for (i = 0; i < n; i++) {
		for (a = 0; a < mx->naxes; a++)
			out[i * mx->naxes + a] = ANY;
		for (j = 0; j < v[i].n; j++) {
			ax = axis_of(mx, v[i].v[j].key);
			if (ax < 0) {
				/* Not an axis: an exclude never matches;
				 * an include just carries the key. */
				if (unknown_never && mx->naxes > 0)
					out[i * mx->naxes] = NEVER;
				continue;
			}
			out[i * mx->naxes + (size_t)ax] =
			    value_of(mx, (size_t)ax, v[i].v[j].value);
		}
	}
}

static void
walker_init(struct walker *w, const struct vg_manifest *m)
{
	const struct vg_matrix *mx = &m->matrix;
	size_t a, na = mx->naxes ? mx->naxes : 1;

	memset(w, 0, sizeof(*w));
	w->m = m;
	w->mx = mx;
	w->exc = vg_xcalloc(mx->nexclude * na + 1, sizeof(*w->exc));
	w->inc = vg_xcalloc(mx->ninclude * na + 1, sizeof(*w->inc));
	w->inc_hit = vg_xcalloc(mx->ninclude + 1, 1);
	w->matched = vg_xcalloc(mx->ninclude + 1, 1);
	w->idx = vg_xcalloc(na, sizeof(*w->idx));
	patterns(mx, mx->exclude, mx->nexclude, w->exc, 1);
	patterns(mx, mx->include, mx->ninclude, w->inc, 0);
	w->product = mx->naxes ? 1 : 0;
	for (a = 0; a < mx->naxes; a++) {
		size_t k = mx->axes[a].values.n;

		if (k != 0 && w->product > (size_t)-1 / k)
			w->product = (size_t)-1;
		else
			w->product *= k;
	}
}

static void
walker_release(struct walker *w)
{
	free(w->exc);
	free(w->inc);
	free(w->inc_hit);
	free(w->matched);
	free(w->idx);
}

/* True when pattern row p matches the current combination. */
static int
row_matches(const struct walker *w, const long *p)
{
	size_t a;

	for (a = 0; a < w->mx->naxes; a++)
		if (p[a] != ANY && p[a] != (long)w->idx[a])
			return 0;
	return 1;
}

/*
 * Calls fn for every task in order: combo >= 0 for a product
 * combination (w->idx, w->matched describe it), or inc >= 0 for an
 * include that became its own task.  Stops when fn returns non-zero.
 */
typedef int (*walk_fn)(struct walker *w, long inc, void *arg);

static int
walk(struct walker *w, walk_fn fn, void *arg)
{
	const struct vg_matrix *mx = w->mx;
	size_t i, a, na = mx->naxes;
	int rc, skip;

	if (na == 0 && mx->ninclude == 0)
		return fn(w, -1, arg);	/* no matrix: one task */
	for (i = 0; na > 0 && i < w->product; i++) {
		skip = 0;
		for (a = 0; a < mx->nexclude && !skip; a++)
			skip = row_matches(w, w->exc + a * na);
		if (!skip) {
			w->combo = i;
			for (a = 0; a < mx->ninclude; a++) {
				w->matched[a] = (unsigned char)row_matches(w,
				    w->inc + a * na);
				w->inc_hit[a] |= w->matched[a];
			}
			if ((rc = fn(w, -1, arg)) != 0)
				return rc;
		}
		/* odometer: the last axis moves fastest */
		for (a = na; a-- > 0;) {
			if (++w->idx[a] < mx->axes[a].values.n)
				break;
			w->idx[a] = 0;
		}
	}
	for (i = 0; i < mx->ninclude; i++) {
		if (na > 0 && w->inc_hit[i])
			continue;
		if ((rc = fn(w, (long)i, arg)) != 0)
			return rc;
	}
	return 0;
}

/* Value of matrix key name (len bytes) in the current task, or NULL. */
static const char *
task_value(const struct walker *w, long inc, const char *name, size_t len)
{
	const struct vg_matrix *mx = w->mx;
	const char *v = NULL;
	size_t a, i, j;

	if (inc >= 0) {
		for (j = 0; j < mx->include[inc].n; j++)
			if (strlen(mx->include[inc].v[j].key) == len &&
			    strncmp(mx->include[inc].v[j].key, name, len) == 0)
				return mx->include[inc].v[j].value;
		return NULL;
	}
	for (a = 0; a < mx->naxes; a++)
		if (strlen(mx->axes[a].name) == len &&
		    strncmp(mx->axes[a].name, name, len) == 0)
			return mx->axes[a].values.v[w->idx[a]];
	for (i = 0; i < mx->ninclude; i++) {
		if (!w->matched[i])
			continue;
		for (j = 0; j < mx->include[i].n; j++)
			if (strlen(mx->include[i].v[j].key) == len &&
			    strncmp(mx->include[i].v[j].key, name, len) == 0)
				v = mx->include[i].v[j].value;
	}
	return v;
}

static int
count_fn(struct walker *w, long inc, void *arg)
{
	(void)w;
	(void)inc;
	if (++*(size_t *)arg > VG_EXPAND_MAX_TASKS)
		return 1;
	return 0;
}

/* Counts tasks; more than VG_EXPAND_MAX_TASKS gives that plus one. */
static size_t
count_tasks(struct walker *w)
{
	const struct vg_matrix *mx = w->mx;
	size_t n = 0;

	if (mx->naxes == 0)
		return mx->ninclude ? mx->ninclude : 1;
	if (w->product > VG_EXPAND_MAX_TASKS)
		return w->product;
	if (mx->nexclude == 0 && mx->ninclude == 0)
		return w->product;
	walk(w, count_fn, &n);
	return n;
}

size_t
vg_expand_count(const struct vg_manifest *m)
{
	struct walker w;
	size_t n;

	walker_init(&w, m);
	n = count_tasks(&w);
	walker_release(&w);
	return n;
}

/* ---- compiled templates ---- */

struct tmpl {
	const char		*s;
	struct vg_sub_seg	*segs;
	size_t			 n;
};

struct plan {
	struct tmpl	 shell;
	struct tmpl	*argv;
	struct tmpl	*env;
	struct tmpl	*res;		/* m->resources.tmpl, in its order */
	size_t		 nargv;
	size_t		 nenv;
	size_t		 nres;
};

static void
plan_release(struct plan *p)
{
	size_t i;

	free(p->shell.segs);
	for (i = 0; i < p->nargv; i++)
		free(p->argv[i].segs);
	for (i = 0; i < p->nenv; i++)
		free(p->env[i].segs);
	for (i = 0; i < p->nres; i++)
		free(p->res[i].segs);
	free(p->argv);
	free(p->env);
	free(p->res);
}

/* Splits s into t; a malformed template is reported at loc. */
static int
tmpl_init(struct tmpl *t, const char *s, const struct vg_loc *loc,
    struct vg_diag *d)
{
	const char *why;
	size_t bad;

	t->s = s;
	if (vg_sub_split(s, &t->segs, &t->n, &bad, &why) != 0) {
		vg_diag_add(d, loc, "%s", why);
		free(t->segs);
		t->segs = NULL;
		t->n = 0;
		return VG_EINVAL;
	}
	return 0;
}

/* Splits resources template kv into t: only matrix values and the task
 * index, and a row that exists. */
static int
res_tmpl_init(struct tmpl *t, const struct vg_kv *kv, struct vg_diag *d)
{
	size_t i;

	if (tmpl_init(t, kv->value, &kv->loc, d) != 0)
		return VG_EINVAL;
	for (i = 0; i < t->n; i++)
		if (t->segs[i].kind == VG_SUB_ENV) {
			vg_diag_add(d, &kv->loc, "'resources.%s': only "
			    "${{ matrix.NAME }} and ${{ task.index }} "
			    "expand here, not ${{ env.%.*s }}", kv->key,
			    (int)t->segs[i].len, t->s + t->segs[i].off);
			return VG_EINVAL;
		}
	return 0;
}

static int
plan_init(struct plan *p, const struct vg_manifest *m, struct vg_diag *d)
{
	size_t i;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (!m->command.is_argv && m->command.shell != NULL &&
	    (rc = tmpl_init(&p->shell, m->command.shell, &m->command.loc,
	    d)) == 0) {
		vg_sub_shell(p->shell.s, p->shell.segs, p->shell.n);
		/* The loader refused these at their place (manifest.c). */
		for (i = 0; i < p->shell.n; i++)
			if (p->shell.segs[i].ctx == VG_SHCTX_UNSAFE) {
				vg_diag_add(d, &m->command.loc, "'${{ }}' "
				    "%s in 'command'",
				    p->shell.segs[i].ctx_why);
				rc = VG_EINVAL;
				break;
			}
	}
	if (m->command.is_argv) {
		p->argv = vg_xcalloc(m->command.argv.n + 1, sizeof(*p->argv));
		for (i = 0; i < m->command.argv.n; i++, p->nargv++)
			rc |= tmpl_init(&p->argv[i], m->command.argv.v[i],
			    &m->command.loc, d);
	}
	p->env = vg_xcalloc(m->env.n + 1, sizeof(*p->env));
	for (i = 0; i < m->env.n; i++, p->nenv++)
		rc |= tmpl_init(&p->env[i], m->env.v[i].value,
		    &m->env.v[i].loc, d);
	p->res = vg_xcalloc(m->resources.tmpl.n + 1, sizeof(*p->res));
	for (i = 0; i < m->resources.tmpl.n; i++, p->nres++)
		rc |= res_tmpl_init(&p->res[i], &m->resources.tmpl.v[i], d);
	return rc ? VG_EINVAL : 0;
}

/* State while substituting one task. */
struct subst {
	struct walker		*w;
	long			 inc;
	long			 index;
	const struct vg_kvs	*env;		/* substituted env so far */
	const char		*missing;	/* first undefined name */
	size_t			 missing_len;
	const struct vg_loc	*res_loc;	/* a resources template failed
						   (missing, or why): its place */
	char			*why;		/* a value its row refuses:
						   "FILE:L:C: message" */
};

/* Appends template t for the current task; quote: t is a string command,
 * each value written as data for its place (vg_sub_shell). */
static void
tmpl_apply(const struct tmpl *t, struct subst *st, int quote,
    struct vg_buf *out)
{
	const struct vg_sub_seg *g;
	const char *v;
	char num[24];
	char *nm;
	size_t i;

	for (i = 0; i < t->n; i++) {
		g = &t->segs[i];
		v = NULL;
		switch (g->kind) {
		case VG_SUB_TEXT:
			vg_buf_add(out, t->s + g->off, g->len);
			continue;
		case VG_SUB_INDEX:
			snprintf(num, sizeof(num), "%ld", st->index);
			v = num;
			break;
		case VG_SUB_MATRIX:
			v = task_value(st->w, st->inc, t->s + g->off, g->len);
			break;
		case VG_SUB_ENV:
			nm = vg_xstrndup(t->s + g->off, g->len);
			v = st->env != NULL ? vg_kvs_get(st->env, nm) : NULL;
			/* Never recorded in clear (common/secrets.h). */
			if (v != NULL)
				vg_secret_note(nm, v);
			free(nm);
			break;
		case VG_SUB_BAD:	/* tmpl_init refused the template */
			continue;
		}
		if (v == NULL) {
			if (st->missing == NULL) {
				st->missing = t->s + g->off;
				st->missing_len = g->len;
			}
			continue;
		}
		if (quote)
			vg_sub_shell_value(out, g->ctx, v);
		else
			vg_buf_adds(out, v);
	}
}

/* The resources row named key. */
static const struct vg_field *
res_field(const char *key)
{
	const struct vg_field *f;

	for (f = vg_resources_section.fields; f->key != NULL; f++)
		if (strcmp(f->key, key) == 0)
			break;
	return f;
}

/*
 * Decodes the resources templates of the current task onto r (a copy
 * of m's).  On a name without a value (st->missing) or a value its row
 * refuses (st->why, to free) sets st->res_loc and stops.
 */
static void
res_apply(const struct vg_manifest *m, const struct plan *p,
    struct subst *st, struct vg_resources *r)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_diag d;
	struct vg_dctx c;
	struct vg_ynode n;
	const struct vg_kv *kv;
	size_t i;

	memset(&d, 0, sizeof(d));
	for (i = 0; i < p->nres && st->missing == NULL; i++) {
		kv = &m->resources.tmpl.v[i];
		vg_buf_reset(&b);
		tmpl_apply(&p->res[i], st, 0, &b);
		if (st->missing != NULL) {
			st->res_loc = &kv->loc;
			break;
		}
		memset(&c, 0, sizeof(c));
		c.d = &d;
		c.file = kv->loc.file;
		snprintf(c.path, sizeof(c.path), "resources.%s", kv->key);
		memset(&n, 0, sizeof(n));
		n.kind = VG_Y_SCALAR;
		n.style = VG_YS_PLAIN;
		n.line = kv->loc.line;
		n.col = kv->loc.col;
		vg_buf_adds(&b, "");	/* b.data is set even when empty */
		n.str = b.data;
		n.len = b.len;
		vg_schema_decode_field(res_field(kv->key), &n, r, &c);
		if (c.errors > 0) {
			st->res_loc = &kv->loc;
			st->why = vg_xstrdup(d.lines.n > 0 ? d.lines.v[0] :
			    kv->value);
			break;
		}
	}
	vg_diag_release(&d);
	vg_buf_release(&b);
}

/* "VIGIL_MATRIX_" + name upper-cased, other bytes as '_'. */
static char *
matrix_env_name(const char *name)
{
	char *s = vg_xasprintf("VIGIL_MATRIX_%s", name), *p;

	for (p = s + 13; *p != '\0'; p++)
		*p = isalnum((unsigned char)*p) ?
		    (char)toupper((unsigned char)*p) : '_';
	return s;
}

/* Fills t->matrix for the current combination or include. */
static void
task_matrix(struct walker *w, long inc, struct vg_kvs *out)
{
	const struct vg_matrix *mx = w->mx;
	size_t a, i, j;

	if (inc >= 0) {
		for (j = 0; j < mx->include[inc].n; j++)
			vg_kvs_set(out, mx->include[inc].v[j].key,
			    mx->include[inc].v[j].value);
		return;
	}
	for (a = 0; a < mx->naxes; a++)
		vg_kvs_set(out, mx->axes[a].name,
		    mx->axes[a].values.v[w->idx[a]]);
	for (i = 0; i < mx->ninclude; i++) {
		if (!w->matched[i])
			continue;
		for (j = 0; j < mx->include[i].n; j++)
			if (axis_of(mx, mx->include[i].v[j].key) < 0)
				vg_kvs_set(out, mx->include[i].v[j].key,
				    mx->include[i].v[j].value);
	}
}

/* Builds one task; on an undefined name sets st->missing. */
static void
task_build(struct walker *w, long inc, const struct plan *p, long index,
    struct vg_task *t, struct subst *st)
{
	const struct vg_manifest *m = w->m;
	struct vg_buf b = VG_BUF_INIT;
	size_t i;
	char *name;

	memset(t, 0, sizeof(*t));
	memset(st, 0, sizeof(*st));
	st->w = w;
	st->inc = inc;
	st->index = index;
	t->index = (int)index;
	/* Exact sizes: thousands of tasks may be held at once. */
	t->matrix.cap = w->mx->naxes + 1;
	t->matrix.v = vg_xcalloc(t->matrix.cap, sizeof(*t->matrix.v));
	task_matrix(w, inc, &t->matrix);
	t->env.cap = m->env.n + t->matrix.n;
	t->env.v = vg_xcalloc(t->env.cap + 1, sizeof(*t->env.v));
	for (i = 0; i < p->nenv; i++) {
		vg_buf_reset(&b);
		tmpl_apply(&p->env[i], st, 0, &b);
		vg_kvs_set(&t->env, m->env.v[i].key, vg_buf_str(&b));
		if (vg_secret_name(m->env.v[i].key, strlen(m->env.v[i].key)))
			vg_secret_note(m->env.v[i].key, vg_buf_str(&b));
	}
	st->env = &t->env;
	t->command.loc = m->command.loc;
	t->command.is_argv = m->command.is_argv;
	if (!m->command.is_argv) {
		vg_buf_reset(&b);
		tmpl_apply(&p->shell, st, 1, &b);
		t->command.shell = vg_xstrdup(vg_buf_str(&b));
	}
	for (i = 0; i < p->nargv; i++) {
		vg_buf_reset(&b);
		tmpl_apply(&p->argv[i], st, 0, &b);
		vg_strv_push(&t->command.argv, vg_buf_str(&b));
	}
	for (i = 0; i < t->matrix.n; i++) {
		name = matrix_env_name(t->matrix.v[i].key);
		vg_kvs_set(&t->env, name, t->matrix.v[i].value);
		free(name);
	}
	vg_schema_copy(&vg_resources_section, &t->resources, &m->resources);
	if (p->nres > 0)
		res_apply(m, p, st, &t->resources);
	vg_buf_release(&b);
}

/* Describes the matrix values of t for a message ("lr=0.1, bs=32"). */
static void
describe(const struct vg_task *t, struct vg_buf *b)
{
	size_t i;

	for (i = 0; i < t->matrix.n && b->len < 200; i++)
		vg_buf_printf(b, "%s%s=%s", i ? ", " : "", t->matrix.v[i].key,
		    t->matrix.v[i].value);
}

struct build {
	const struct plan	*plan;
	struct vg_taskset	*out;	/* every task, or */
	vg_task_fn		 each;	/* one task at a time, or */
	void			*arg;
	long			 want;	/* only this index (>= 0) */
	struct vg_task		*one;
	int			 stop;	/* what each returned */
	struct vg_diag		*d;
	size_t			 n;
	int			 errors;
	struct vg_strv		 reported;
};

/* Reports a name with no value in task t (once per name). */
static void
report_missing(struct build *b, const struct vg_task *t,
    const struct subst *st, const struct vg_loc *loc)
{
	struct vg_buf desc = VG_BUF_INIT;
	char *nm = vg_xstrndup(st->missing, st->missing_len);
	size_t i;

	b->errors++;
	for (i = 0; i < b->reported.n; i++)
		if (strcmp(b->reported.v[i], nm) == 0)
			break;
	if (i == b->reported.n) {
		describe(t, &desc);
		vg_diag_add(b->d, loc, "'matrix.%s' has no value in task %d "
		    "(%s)", nm, t->index, vg_buf_str(&desc));
		vg_strv_take(&b->reported, nm);
		nm = NULL;
	}
	free(nm);
	vg_buf_release(&desc);
}

/* Reports a resources value of task t its row refuses (once per
 * message), and frees st->why. */
static void
report_why(struct build *b, const struct vg_task *t, struct subst *st)
{
	struct vg_buf desc = VG_BUF_INIT;
	size_t i;

	b->errors++;
	for (i = 0; i < b->reported.n; i++)
		if (strcmp(b->reported.v[i], st->why) == 0)
			break;
	if (i == b->reported.n) {
		describe(t, &desc);
		vg_strv_take(&b->d->lines, vg_xasprintf("%s (in task %d: %s)",
		    st->why, t->index, vg_buf_str(&desc)));
		vg_strv_take(&b->reported, st->why);
		st->why = NULL;
	}
	free(st->why);
	st->why = NULL;
	vg_buf_release(&desc);
}

/* Reports what went wrong substituting task t, if anything. */
static void
report_task(struct build *b, const struct vg_task *t, struct subst *st,
    const struct vg_manifest *m)
{
	if (st->missing != NULL)
		report_missing(b, t, st, st->res_loc != NULL ? st->res_loc :
		    &m->command.loc);
	else if (st->why != NULL)
		report_why(b, t, st);
}

static int
build_fn(struct walker *w, long inc, void *arg)
{
	struct build *b = arg;
	struct vg_task t;
	struct subst st;
	long index = (long)b->n++;

	if (b->want >= 0 && index != b->want)
		return 0;
	task_build(w, inc, b->plan, index, &t, &st);
	report_task(b, &t, &st, w->m);
	if (b->errors > 0) {
		vg_task_release(&t);
	} else if (b->out != NULL) {
		b->out->v[index] = t;
		b->out->n = (size_t)index + 1;
	} else if (b->one != NULL) {
		*b->one = t;
	} else if (b->each != NULL) {
		b->stop = b->each(&t, b->arg);
		vg_task_release(&t);
	} else {
		vg_task_release(&t);
	}
	if (b->want >= 0 || b->stop != 0)
		return 1;
	/* A few distinct problems are enough. */
	return b->reported.n >= 5;
}

/* Reports two matrix names sharing one VIGIL_MATRIX_ variable. */
static int
check_env_names(const struct vg_matrix *mx, struct vg_diag *d)
{
	struct vg_strv names = VG_STRV_INIT, envs = VG_STRV_INIT;
	const struct vg_loc **locs = NULL;
	size_t i, j, n = 0, cap = 0;
	int errors = 0;

	for (i = 0; i < mx->naxes; i++) {
		vg_strv_push(&names, mx->axes[i].name);
		locs = vg_xgrow(locs, &cap, ++n, sizeof(*locs));
		locs[n - 1] = &mx->axes[i].loc;
	}
	for (i = 0; i < mx->ninclude; i++)
		for (j = 0; j < mx->include[i].n; j++) {
			vg_strv_push(&names, mx->include[i].v[j].key);
			locs = vg_xgrow(locs, &cap, ++n, sizeof(*locs));
			locs[n - 1] = &mx->include[i].v[j].loc;
		}
	for (i = 0; i < names.n; i++)
		vg_strv_take(&envs, matrix_env_name(names.v[i]));
	for (i = 0; i < names.n; i++) {
		for (j = 0; j < i; j++) {
			if (strcmp(envs.v[i], envs.v[j]) != 0 ||
			    strcmp(names.v[i], names.v[j]) == 0)
				continue;
			vg_diag_add(d, locs[i], "matrix names '%s' and '%s' "
			    "both become %s",
			    names.v[j], names.v[i], envs.v[i]);
			errors++;
			i = names.n;
			break;
		}
	}
	vg_strv_release(&names);
	vg_strv_release(&envs);
	free(locs);
	return errors;
}

/* Reports a task count over the limit. */
static int
check_count(const struct vg_manifest *m, struct walker *w, struct vg_diag *d)
{
	struct vg_loc loc = m->command.loc;
	size_t n = count_tasks(w);

	/* At the first axis, else at the command (a manifest built in code
	 * may have neither). */
	if (m->matrix.naxes > 0)
		loc = m->matrix.axes[0].loc;
	if (loc.file == NULL)
		loc = (struct vg_loc){ m->file, 0, 0 };
	if (n == 0) {
		if (m->matrix.nexclude > 0)
			loc = m->matrix.exclude[0].v[0].loc;
		vg_diag_add(d, &loc, "'matrix.exclude' removes every "
		    "combination: no tasks left");
		return 1;
	}
	if (n <= VG_EXPAND_MAX_TASKS)
		return 0;
	if (w->product == (size_t)-1)
		vg_diag_add(d, &loc, "matrix expands to more than %zu tasks "
		    "(limit %d)", (size_t)-1, VG_EXPAND_MAX_TASKS);
	else
		vg_diag_add(d, &loc, "matrix expands to %s%zu tasks, more "
		    "than the limit of %d", n == VG_EXPAND_MAX_TASKS + 1 ?
		    "more than " : "", n == VG_EXPAND_MAX_TASKS + 1 ?
		    (size_t)VG_EXPAND_MAX_TASKS : n, VG_EXPAND_MAX_TASKS);
	return 1;
}

/* Collects the matrix names a template refers to. */
static void
plan_refs(const struct tmpl *t, struct vg_strv *refs)
{
	size_t i, j;
	char *nm;

	for (i = 0; i < t->n; i++) {
		if (t->segs[i].kind != VG_SUB_MATRIX)
			continue;
		nm = vg_xstrndup(t->s + t->segs[i].off, t->segs[i].len);
		for (j = 0; j < refs->n; j++)
			if (strcmp(refs->v[j], nm) == 0)
				break;
		if (j < refs->n)
			free(nm);
		else
			vg_strv_take(refs, nm);
	}
}

struct check {
	const struct plan	*plan;
	struct vg_strv		 refs;		/* names used */
	struct vg_diag		*d;
	long			 index;
	int			 errors;
	struct vg_strv		 reported;
};

/* Builds the current task to report what is wrong with it. */
static void
check_report(struct walker *w, long inc, struct check *ck)
{
	struct vg_task t;
	struct subst st;
	struct build b;

	task_build(w, inc, ck->plan, ck->index, &t, &st);
	memset(&b, 0, sizeof(b));
	b.d = ck->d;
	b.reported = ck->reported;
	report_task(&b, &t, &st, w->m);
	ck->reported = b.reported;
	ck->errors += b.errors;
	vg_task_release(&t);
}

/* Looks every referenced name up in the current task, without
 * building it; builds it only to describe a problem. */
static int
check_fn(struct walker *w, long inc, void *arg)
{
	struct check *ck = arg;
	size_t i;

	for (i = 0; i < ck->refs.n; i++) {
		if (task_value(w, inc, ck->refs.v[i],
		    strlen(ck->refs.v[i])) != NULL)
			continue;
		check_report(w, inc, ck);
		break;
	}
	ck->index++;
	return ck->reported.n >= 5;
}

/* Fills r with the current task's resources (a copy of m's, templates
 * decoded; the caller releases it); -1 when a template fails. */
static int
task_res(struct walker *w, long inc, const struct plan *p, long index,
    struct vg_resources *r)
{
	struct subst st;

	memset(&st, 0, sizeof(st));
	st.w = w;
	st.inc = inc;
	st.index = index;
	vg_schema_copy(&vg_resources_section, r, &w->m->resources);
	res_apply(w->m, p, &st, r);
	free(st.why);
	return st.res_loc != NULL ? -1 : 0;
}

/* Decodes every task's resources templates, building a task only to
 * describe a problem. */
static int
res_check_fn(struct walker *w, long inc, void *arg)
{
	struct check *ck = arg;
	struct vg_resources r;

	if (task_res(w, inc, ck->plan, ck->index, &r) != 0)
		check_report(w, inc, ck);
	vg_schema_release(&vg_resources_section, &r);
	ck->index++;
	return ck->reported.n >= 5;
}

int
vg_expand_check(const struct vg_manifest *m, struct vg_diag *d)
{
	struct walker w;
	struct plan p;
	struct check ck;
	size_t i;
	int errors;

	if ((errors = check_env_names(&m->matrix, d)) > 0)
		return errors;
	walker_init(&w, m);
	if (check_count(m, &w, d) != 0) {
		walker_release(&w);
		return 1;
	}
	memset(&ck, 0, sizeof(ck));
	if (plan_init(&p, m, d) != 0) {
		plan_release(&p);
		walker_release(&w);
		return 1;
	}
	ck.plan = &p;
	ck.d = d;
	plan_refs(&p.shell, &ck.refs);
	for (i = 0; i < p.nargv; i++)
		plan_refs(&p.argv[i], &ck.refs);
	for (i = 0; i < p.nenv; i++)
		plan_refs(&p.env[i], &ck.refs);
	/* Every task has every axis unless includes are involved. */
	if (ck.refs.n > 0 && m->matrix.ninclude > 0)
		walk(&w, check_fn, &ck);
	if (p.nres > 0 && ck.errors == 0) {
		walker_release(&w);
		walker_init(&w, m);
		ck.index = 0;
		walk(&w, res_check_fn, &ck);
	}
	errors = ck.errors;
	vg_strv_release(&ck.refs);
	vg_strv_release(&ck.reported);
	plan_release(&p);
	walker_release(&w);
	return errors;
}

/* Runs the walk for b (out, each or want set by the caller). */
static int
expand_run(const struct vg_manifest *m, struct build *b,
    struct vg_diag *diag, struct vg_err *e)
{
	struct walker w;
	struct plan p;
	int rc = 0;

	walker_init(&w, m);
	memset(&p, 0, sizeof(p));
	if (check_count(m, &w, diag) != 0) {
		rc = vg_err_set(e, VG_ELIMIT, "'%s': too many tasks", m->file);
		goto out;
	}
	if (plan_init(&p, m, diag) != 0) {
		rc = vg_err_set(e, VG_EINVAL, "'%s': bad substitution",
		    m->file);
		goto out;
	}
	if (b->out != NULL)
		b->out->v = vg_xcalloc(count_tasks(&w), sizeof(*b->out->v));
	/* count_tasks may have walked: start from a fresh walker. */
	walker_release(&w);
	walker_init(&w, m);
	b->plan = &p;
	b->d = diag;
	walk(&w, build_fn, b);
	vg_strv_release(&b->reported);
	if (b->errors > 0)
		rc = vg_err_set(e, VG_EINVAL, "'%s': a task's ${{ ... }} "
		    "value is undefined or invalid", m->file);
	else if (b->stop != 0)
		rc = b->stop;
out:
	plan_release(&p);
	walker_release(&w);
	return rc;
}

int
vg_expand(const struct vg_manifest *m, struct vg_taskset *out,
    struct vg_diag *diag, struct vg_err *e)
{
	struct build b;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	b.want = -1;
	b.out = out;
	if ((rc = expand_run(m, &b, diag, e)) != 0)
		vg_taskset_release(out);
	return rc;
}

int
vg_expand_each(const struct vg_manifest *m, vg_task_fn fn, void *arg,
    struct vg_diag *diag, struct vg_err *e)
{
	struct build b;

	memset(&b, 0, sizeof(b));
	b.want = -1;
	b.each = fn;
	b.arg = arg;
	return expand_run(m, &b, diag, e);
}

int
vg_expand_task(const struct vg_manifest *m, size_t index, struct vg_task *t,
    struct vg_diag *diag, struct vg_err *e)
{
	struct build b;
	int rc;

	memset(t, 0, sizeof(*t));
	memset(&b, 0, sizeof(b));
	b.want = (long)index;
	b.one = t;
	if ((rc = expand_run(m, &b, diag, e)) != 0) {
		vg_task_release(t);
		return rc;
	}
	if (index >= b.n)
		return vg_err_set(e, VG_ENOENT, "'%s' has no task %zu (it "
		    "has %zu)", m->file, index, b.n);
	return 0;
}

struct res_walk {
	const struct plan	*plan;
	vg_res_fn		 fn;
	void			*arg;
	long			 index;
	int			 rc;
};

/* Decodes the current task's resources and hands them to fn. */
static int
res_walk_fn(struct walker *w, long inc, void *arg)
{
	struct res_walk *rw = arg;
	struct vg_resources r;

	if (task_res(w, inc, rw->plan, rw->index, &r) == 0)
		rw->rc = rw->fn(rw->index, &r, rw->arg);
	vg_schema_release(&vg_resources_section, &r);
	rw->index++;
	return rw->rc != 0;
}

int
vg_expand_resources(const struct vg_manifest *m, vg_res_fn fn, void *arg)
{
	struct res_walk rw;
	struct walker w;
	struct plan p;
	struct vg_diag d;

	if (m->resources.tmpl.n == 0)
		return fn(-1, &m->resources, arg);
	memset(&d, 0, sizeof(d));
	memset(&rw, 0, sizeof(rw));
	if (plan_init(&p, m, &d) == 0) {
		rw.plan = &p;
		rw.fn = fn;
		rw.arg = arg;
		walker_init(&w, m);
		walk(&w, res_walk_fn, &rw);
		walker_release(&w);
	}
	plan_release(&p);
	vg_diag_release(&d);
	return rw.rc;
}

/* Raises the peak (arg) to what one task asks. */
static int
peak_fn(long index, const struct vg_resources *r, void *arg)
{
	struct vg_resources *pk = arg;

	(void)index;
	if (r->cpus > pk->cpus)
		pk->cpus = r->cpus;
	if (r->gpus > pk->gpus)
		pk->gpus = r->gpus;
	if (r->memory > pk->memory)
		pk->memory = r->memory;
	if (r->time > pk->time)
		pk->time = r->time;
	return 0;
}

void
vg_expand_peak(const struct vg_manifest *m, struct vg_resources *peak)
{
	memset(peak, 0, sizeof(*peak));
	vg_expand_resources(m, peak_fn, peak);
}


/* ---- tasks by index (vg_expand_lazy) ---- */

/* Top bit of a task's place: an include that became its own task. */
#define AT_INCLUDE	0x80000000u

/* What a lazy taskset holds instead of its tasks. */
struct vg_task_src {
	struct walker	 w;
	struct plan	 p;
	uint32_t	*at;	/* per task: its combination, or AT_INCLUDE |
				   include; NULL: task i is combination i */
};

/* Sets w to product combination combo (the last axis fastest). */
static void
walker_seek(struct walker *w, size_t combo)
{
	const struct vg_matrix *mx = w->mx;
	size_t a, k, na = mx->naxes;

	for (a = na; a-- > 0;) {
		k = mx->axes[a].values.n;
		w->idx[a] = k > 0 ? combo % k : 0;
		combo = k > 0 ? combo / k : 0;
	}
	for (a = 0; a < mx->ninclude; a++)
		w->matched[a] = (unsigned char)row_matches(w,
		    w->inc + a * na);
}

struct lazy_build {
	struct build	 b;
	uint32_t	*at;
};

/* Checks one task as vg_expand builds it and notes its place. */
static int
lazy_fn(struct walker *w, long inc, void *arg)
{
	struct lazy_build *lb = arg;
	size_t index = lb->b.n;

	if (lb->at != NULL)
		lb->at[index] = inc >= 0 ? AT_INCLUDE | (uint32_t)inc :
		    (uint32_t)w->combo;
	return build_fn(w, inc, &lb->b);
}

int
vg_expand_lazy(const struct vg_manifest *m, struct vg_taskset *out,
    struct vg_diag *diag, struct vg_err *e)
{
	struct vg_task_src *src;
	struct lazy_build lb;
	const struct vg_matrix *mx = &m->matrix;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&lb, 0, sizeof(lb));
	src = vg_xcalloc(1, sizeof(*src));
	walker_init(&src->w, m);
	if (check_count(m, &src->w, diag) != 0) {
		rc = vg_err_set(e, VG_ELIMIT, "'%s': too many tasks", m->file);
		goto out;
	}
	if (plan_init(&src->p, m, diag) != 0) {
		rc = vg_err_set(e, VG_EINVAL, "'%s': bad substitution",
		    m->file);
		goto out;
	}
	if (mx->nexclude > 0 || mx->ninclude > 0)
		lb.at = src->at = vg_xcalloc(count_tasks(&src->w) + 1,
		    sizeof(*src->at));
	walker_release(&src->w);
	walker_init(&src->w, m);
	lb.b.want = -1;
	lb.b.plan = &src->p;
	lb.b.d = diag;
	walk(&src->w, lazy_fn, &lb);
	vg_strv_release(&lb.b.reported);
	if (lb.b.errors > 0)
		rc = vg_err_set(e, VG_EINVAL, "'%s': a task's ${{ ... }} "
		    "value is undefined or invalid", m->file);
out:
	if (rc != 0) {
		plan_release(&src->p);
		walker_release(&src->w);
		free(src->at);
		free(src);
		return rc;
	}
	out->n = lb.b.n;
	out->src = src;
	return 0;
}

const struct vg_task *
vg_taskset_at(const struct vg_taskset *ts, size_t i, struct vg_task *tmp)
{
	struct vg_task_src *src = ts->src;
	struct subst st;
	size_t place = i;
	long inc = -1;

	if (ts->v != NULL)
		return &ts->v[i];
	if (src->at != NULL && (src->at[i] & AT_INCLUDE) != 0)
		inc = (long)(src->at[i] & ~AT_INCLUDE);
	else if (src->at != NULL)
		place = src->at[i];
	if (inc < 0)
		walker_seek(&src->w, place);
	task_build(&src->w, inc, &src->p, (long)i, tmp, &st);
	/* vg_expand_lazy built every task once: nothing fails here. */
	free(st.why);
	return tmp;
}

void
vg_task_release(struct vg_task *t)
{
	if (t == NULL)
		return;
	vg_kvs_release(&t->matrix);
	vg_kvs_release(&t->env);
	free(t->command.shell);
	vg_strv_release(&t->command.argv);
	vg_schema_release(&vg_resources_section, &t->resources);
	memset(t, 0, sizeof(*t));
}

void
vg_taskset_release(struct vg_taskset *ts)
{
	size_t i;

	if (ts == NULL)
		return;
	for (i = 0; ts->v != NULL && i < ts->n; i++)
		vg_task_release(&ts->v[i]);
	free(ts->v);
	if (ts->src != NULL) {
		plan_release(&ts->src->p);
		walker_release(&ts->src->w);
		free(ts->src->at);
		free(ts->src);
	}
	memset(ts, 0, sizeof(*ts));
}

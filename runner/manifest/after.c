/*
 * after.c - the manifest's after: field, the runs a run waits for.  Each
 * entry names a run by id or name with a condition: ok (default: the run
 * succeeded), any (it ended), notok (it ended and did not succeed).
 *
 *   after: [prep, {run: train, when: any}, "sweep:notok"]
 *
 * A list replaces what a lower layer gave; a single scalar (one entry,
 * or several separated by commas, as `--set after=...` and `vigil submit
 * --after` give it) is added to the entries already there.  Names are
 * resolved to run ids when the run is created (runner/core/run.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/manifest/after.h"
#include "runner/manifest/schema.h"

const char *const vg_after_cond_names[] = { "ok", "any", "notok", NULL };

int
vg_after_cond_parse(const char *s)
{
	int i;

	for (i = 0; vg_after_cond_names[i] != NULL; i++)
		if (strcmp(vg_after_cond_names[i], s) == 0)
			return i;
	return -1;
}

/* Whether s can name a run: printable, no blanks, commas or colons. */
static int
run_ok(const char *s)
{
	const unsigned char *p;

	if (*s == '\0')
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (!isgraph(*p) || *p == ',' || *p == ':')
			return 0;
	return 1;
}

/* Appends entry run with condition cond to the list. */
static void
push(struct vg_afters *a, const char *run, size_t rlen, int cond,
    const struct vg_loc *loc)
{
	struct vg_after *x;

	a->v = vg_xgrow(a->v, &a->cap, a->n + 1, sizeof(*a->v));
	x = &a->v[a->n++];
	x->run = vg_xstrndup(run, rlen);
	x->cond = cond;
	x->loc = *loc;
}

int
vg_after_add(struct vg_afters *a, const char *spec, const struct vg_loc *loc,
    char *why, size_t n)
{
	const char *p = spec, *end, *colon;
	struct vg_loc none = { NULL, 0, 0 };
	char run[256], cond[16];
	size_t len;
	int k;

	if (*p == '\0') {
		snprintf(why, n, "an empty run reference");
		return -1;
	}
	while (*p != '\0') {
		end = p + strcspn(p, ",");
		colon = memchr(p, ':', (size_t)(end - p));
		len = (size_t)((colon != NULL ? colon : end) - p);
		k = 0;
		if (colon != NULL) {
			snprintf(cond, sizeof(cond), "%.*s",
			    (int)(end - colon - 1), colon + 1);
			k = (size_t)(end - colon - 1) < sizeof(cond) ?
			    vg_after_cond_parse(cond) : -1;
		}
		snprintf(run, sizeof(run), "%.*s", (int)len, p);
		if (len == 0 || len >= sizeof(run) || !run_ok(run)) {
			snprintf(why, n, "'%.*s' is not a run id or name "
			    "(printable, without blanks, ',' or ':')",
			    (int)(end - p), p);
			return -1;
		}
		if (k < 0) {
			snprintf(why, n, "bad condition in '%.*s' (valid: ok, "
			    "any, notok)", (int)(end - p), p);
			return -1;
		}
		push(a, run, len, k, loc != NULL ? loc : &none);
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/* Adds the entries of scalar n, reporting a bad one at n. */
static void
scalar_entries(struct vg_afters *a, const struct vg_ynode *n,
    struct vg_dctx *c)
{
	struct vg_loc loc = { c->file, n->line, n->col };
	char why[320];

	if (vg_after_add(a, n->str, &loc, why, sizeof(why)) != 0)
		vg_dctx_error(c, n, "'%s': %s", c->path, why);
}

/* Decodes one mapping entry {run: RUN, when: COND}. */
static void
map_entry(struct vg_afters *a, const struct vg_ynode *n, struct vg_dctx *c)
{
	const struct vg_ynode *k, *v, *run = NULL, *when = NULL;
	struct vg_loc loc = { c->file, n->line, n->col };
	size_t i;
	int cond = VG_AFTER_OK;

	for (i = 0; i < n->n; i++) {
		k = n->items[2 * i];
		v = n->items[2 * i + 1];
		if (strcmp(k->str, "run") == 0)
			run = v;
		else if (strcmp(k->str, "when") == 0)
			when = v;
		else
			vg_dctx_error(c, k, "'%s': unknown key '%s' (valid: "
			    "run, when)", c->path, k->str);
	}
	if (run == NULL || run->kind != VG_Y_SCALAR || !run_ok(run->str)) {
		vg_dctx_error(c, run != NULL ? run : n, "'%s.run' must name "
		    "a run (its id or name)", c->path);
		return;
	}
	if (when != NULL && (when->kind != VG_Y_SCALAR ||
	    (cond = vg_after_cond_parse(when->str)) < 0)) {
		vg_dctx_error(c, when, "'%s.when' must be ok, any or notok",
		    c->path);
		return;
	}
	push(a, run->str, strlen(run->str), cond, &loc);
}

static void
after_release(const struct vg_field *f, void *p)
{
	struct vg_afters *a = p;
	size_t i;

	(void)f;
	for (i = 0; i < a->n; i++)
		free(a->v[i].run);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static void
after_decode(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	struct vg_afters *a = p, tmp = { NULL, 0, 0 };
	const struct vg_ynode *el;
	size_t i, len;
	char buf[64];

	if (n == NULL || vg_ynode_is_null(n))
		return;
	if (n->kind == VG_Y_SCALAR) {
		scalar_entries(a, n, c);
		return;
	}
	if (n->kind != VG_Y_SEQ) {
		vg_dctx_error(c, n, "'after' must be a list of runs (ids or "
		    "names, or {run: RUN, when: ok|any|notok}), not %s",
		    vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	for (i = 0; i < n->n; i++) {
		el = n->items[i];
		len = vg_dctx_pushi(c, i);
		if (el->kind == VG_Y_SCALAR)
			scalar_entries(&tmp, el, c);
		else if (el->kind == VG_Y_MAP)
			map_entry(&tmp, el, c);
		else
			vg_dctx_error(c, el, "'%s' must be a run or {run: "
			    "RUN, when: COND}, not %s", c->path,
			    vg_dctx_what(el, buf, sizeof(buf)));
		vg_dctx_pop(c, len);
	}
	after_release(f, a);
	*a = tmp;
}

static void
after_encode(const struct vg_field *f, const void *p,
    struct vg_json_writer *w)
{
	const struct vg_afters *a = p;
	size_t i;

	(void)f;
	vg_json_arr_begin(w);
	for (i = 0; i < a->n; i++) {
		vg_json_obj_begin(w);
		vg_json_key(w, "run");
		vg_json_str(w, a->v[i].run);
		vg_json_key(w, "when");
		vg_json_str(w, vg_after_cond_names[a->v[i].cond]);
		vg_json_obj_end(w);
	}
	vg_json_arr_end(w);
}

const struct vg_field_ops vg_after_ops = {
	.decode = after_decode,
	.encode = after_encode,
	.release = after_release,
};

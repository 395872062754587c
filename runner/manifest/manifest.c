/*
 * manifest.c - the manifest's field tables, its custom fields (command,
 * matrix), the checks that span fields, and the JSON form of the effective
 * manifest.
 *
 * Every manifest key is one line in a table below; schema.c turns the
 * tables into decoding, defaults, did-you-mean, JSON and release.  To add
 * a field: add the member to struct vg_manifest (manifest.h) and one
 * table entry here, and document it in docs/manifest.md.  Layering of
 * config files and --set lives in config.c; expansion in expand.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/caps.h"
#include "common/egress-match.h"
#include "runner/manifest/after.h"
#include "runner/manifest/manifest-int.h"
#include "runner/manifest/task.h"
#include "common/path.h"
#include "runner/manifest/plugin.h"
#include "runner/manifest/schema-table.h"


/* ---- command ---- */

/* Decodes a command: a string (shell) or a list (argv). */
static void
command_decode(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	struct vg_command *cmd = p;
	struct vg_mload *ls = c->user;
	struct vg_strv argv = VG_STRV_INIT;
	size_t i, len;
	int before = c->errors;
	char buf[64];

	(void)f;
	/* A session's manifest is stored without a command. */
	if (c->raw && n != NULL && vg_ynode_is_null(n))
		return;
	if (ls != NULL)
		ls->cmd_seen = 1;
	if (n == NULL || vg_ynode_is_null(n) ||
	    (n->kind == VG_Y_SCALAR && n->len == 0)) {
		vg_dctx_error(c, n, "'command' is empty");
		return;
	}
	if (n->kind == VG_Y_MAP) {
		vg_dctx_error(c, n, "'command' must be a string (run by "
		    "/bin/sh -c) or a list (an argv run without a shell), "
		    "not %s", vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	if (n->kind == VG_Y_SCALAR) {
		if (strlen(n->str) != n->len) {
			vg_dctx_error(c, n, "'command' must not contain NUL "
			    "bytes");
			return;
		}
		vg_strv_release(&cmd->argv);
		free(cmd->shell);
		cmd->shell = vg_xstrdup(n->str);
		cmd->is_argv = 0;
	} else {
		if (n->n == 0) {
			vg_dctx_error(c, n, "'command' is an empty list");
			return;
		}
		for (i = 0; i < n->n; i++) {
			const struct vg_ynode *el = n->items[i];

			len = vg_dctx_pushi(c, i);
			if (el->kind != VG_Y_SCALAR || vg_ynode_is_null(el))
				vg_dctx_error(c, el, "'%s' must be a string, "
				    "not %s", c->path,
				    vg_dctx_what(el, buf, sizeof(buf)));
			else if (strlen(el->str) != el->len)
				vg_dctx_error(c, el, "'%s' must not contain "
				    "NUL bytes", c->path);
			else if (i == 0 && el->len == 0)
				vg_dctx_error(c, el, "'%s' (the program) is "
				    "empty", c->path);
			else
				vg_strv_push(&argv, el->str);
			vg_dctx_pop(c, len);
		}
		if (c->errors != before) {
			vg_strv_release(&argv);
			return;
		}
		free(cmd->shell);
		cmd->shell = NULL;
		vg_strv_release(&cmd->argv);
		cmd->argv = argv;
		cmd->is_argv = 1;
	}
	cmd->loc = (struct vg_loc){ c->file, n->line, n->col };
	if (ls != NULL) {
		ls->cmd_node = n;
		ls->cmd_file = c->file;
	}
}

static void
command_encode(const struct vg_field *f, const void *p,
    struct vg_json_writer *w)
{
	const struct vg_command *cmd = p;
	size_t i;

	(void)f;
	if (!cmd->is_argv) {
		vg_json_str(w, cmd->shell);
		return;
	}
	vg_json_arr_begin(w);
	for (i = 0; i < cmd->argv.n; i++)
		vg_json_str(w, cmd->argv.v[i]);
	vg_json_arr_end(w);
}

static void
command_release(const struct vg_field *f, void *p)
{
	struct vg_command *cmd = p;

	(void)f;
	free(cmd->shell);
	cmd->shell = NULL;
	vg_strv_release(&cmd->argv);
	cmd->is_argv = 0;
}

static const struct vg_field_ops command_ops = {
	.decode = command_decode,
	.encode = command_encode,
	.release = command_release,
};

/* ---- matrix ---- */

/* True for names usable in ${{ matrix.NAME }} and VIGIL_MATRIX_NAME. */
static int
name_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	return 1;
}

/* Frees include or exclude lists. */
static void
combos_release(struct vg_kvs **v, size_t *n)
{
	size_t i;

	for (i = 0; *v != NULL && i < *n; i++)
		vg_kvs_release(&(*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

/* Decodes matrix.include or matrix.exclude: a list of mappings. */
static void
combos_decode(const struct vg_ynode *n, struct vg_kvs **v, size_t *nv,
    struct vg_dctx *c)
{
	struct vg_kvs *out = NULL;
	const struct vg_ynode *el, *k, *val;
	size_t i, j, len, len2;
	int before = c->errors;
	char buf[64];

	if (vg_ynode_is_null(n)) {
		combos_release(v, nv);
		return;
	}
	if (n->kind != VG_Y_SEQ) {
		vg_dctx_error(c, n, "'%s' must be a list of mappings, not %s",
		    c->path, vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	if (n->n > 0)
		out = vg_xcalloc(n->n, sizeof(*out));
	for (i = 0; i < n->n; i++) {
		el = n->items[i];
		len = vg_dctx_pushi(c, i);
		if (el->kind != VG_Y_MAP || el->n == 0) {
			vg_dctx_error(c, el, "'%s' must be a mapping of axis "
			    "names to values, not %s", c->path,
			    el->kind == VG_Y_MAP ? "empty" :
			    vg_dctx_what(el, buf, sizeof(buf)));
			vg_dctx_pop(c, len);
			continue;
		}
		for (j = 0; j < el->n; j++) {
			k = el->items[2 * j];
			val = el->items[2 * j + 1];
			len2 = vg_dctx_push(c, k->str);
			if (!name_ok(k->str))
				vg_dctx_error(c, k, "matrix name '%s' may only "
				    "hold letters, digits, '_' and '-'",
				    k->str);
			else if (val->kind != VG_Y_SCALAR ||
			    vg_ynode_is_null(val))
				vg_dctx_error(c, val, "'%s' must be a single "
				    "value, not %s", c->path,
				    vg_dctx_what(val, buf, sizeof(buf)));
			else {
				vg_kvs_set(&out[i], k->str, val->str);
				out[i].v[out[i].n - 1].loc = (struct vg_loc){
				    c->file, k->line, k->col };
			}
			vg_dctx_pop(c, len2);
		}
		vg_dctx_pop(c, len);
	}
	if (c->errors != before) {
		combos_release(&out, &i);
		return;
	}
	combos_release(v, nv);
	*v = out;
	*nv = n->n;
}

/* Reads element i of a range as an integer into *out; 0 or -1. */
static int
range_int(const struct vg_ynode *n, size_t i, long long *out,
    struct vg_dctx *c)
{
	const struct vg_ynode *el = n->items[i];
	char buf[64], *end;
	size_t len;
	int rc = 0;

	len = vg_dctx_pushi(c, i);
	errno = 0;
	if (el->kind != VG_Y_SCALAR || vg_ynode_is_null(el) ||
	    el->len == 0 || isspace((unsigned char)el->str[0]) ||
	    (*out = strtoll(el->str, &end, 10), *end != '\0')) {
		vg_dctx_error(c, el, "'%s' must be an integer, not %s",
		    c->path, vg_dctx_what(el, buf, sizeof(buf)));
		rc = -1;
	} else if (errno != 0 || *out < -VG_RANGE_MAX_ABS ||
	    *out > VG_RANGE_MAX_ABS) {
		vg_dctx_error(c, el, "'%s' is out of range: %s is not "
		    "between -2^50 and 2^50", c->path, el->str);
		rc = -1;
	}
	vg_dctx_pop(c, len);
	return rc;
}

/*
 * Decodes {range: [start, stop]} or {range: [start, stop, step]} (n, the
 * mapping) into values: the integers from start up to stop, stop
 * excluded, as Python's range().  Returns 0, or -1 after reporting why.
 */
static int
range_decode(const struct vg_ynode *k, const struct vg_ynode *n,
    struct vg_strv *values, struct vg_dctx *c)
{
	const struct vg_ynode *r = vg_ynode_get(n, "range");
	long long start = 0, stop = 0, step = 1, count, v;
	const char *what;
	size_t i, len;
	char buf[64];
	int bad = 0;

	for (i = 0; i < n->n; i++)
		if (strcmp(n->items[2 * i]->str, "range") != 0) {
			vg_dctx_error(c, n->items[2 * i], "unknown key %s in "
			    "matrix axis '%s' (valid keys: range)",
			    vg_dctx_what(n->items[2 * i], buf, sizeof(buf)),
			    k->str);
			return -1;
		}
	len = vg_dctx_push(c, "range");
	/* r is set: every key of n is "range" and n has one at least. */
	if (r->kind != VG_Y_SEQ || r->n < 2 || r->n > 3) {
		what = buf;
		if (r->kind == VG_Y_SEQ)
			snprintf(buf, sizeof(buf), "a list of %zu", r->n);
		else
			what = vg_dctx_what(r, buf, sizeof(buf));
		vg_dctx_error(c, r, "'%s' must be [start, stop] or [start, "
		    "stop, step] (integers), not %s", c->path, what);
		goto bad;
	}
	bad |= range_int(r, 0, &start, c);
	bad |= range_int(r, 1, &stop, c);
	if (r->n == 3)
		bad |= range_int(r, 2, &step, c);
	if (bad)
		goto bad;
	if (step == 0) {
		vg_dctx_error(c, r->items[2], "'%s' has a step of 0",
		    c->path);
		goto bad;
	}
	/* |stop - start| <= 2 * VG_RANGE_MAX_ABS: no overflow. */
	count = step > 0 ? (stop - start + step - 1) / step :
	    (start - stop - step - 1) / -step;
	if (count <= 0) {
		buf[0] = '\0';
		if (r->n == 3)
			snprintf(buf, sizeof(buf), ", %lld", step);
		vg_dctx_error(c, r, "'%s' is empty: [%lld, %lld%s] has no "
		    "values (stop is excluded)", c->path, start, stop, buf);
		goto bad;
	}
	if (count > VG_EXPAND_MAX_TASKS) {
		vg_dctx_error(c, r, "'%s' has %lld values, more than the "
		    "limit of %d", c->path, count, VG_EXPAND_MAX_TASKS);
		goto bad;
	}
	for (v = start, i = 0; i < (size_t)count; i++, v += step)
		vg_strv_pushf(values, "%lld", v);
	vg_dctx_pop(c, len);
	return 0;
bad:
	vg_dctx_pop(c, len);
	return -1;
}

/* Decodes one axis: a non-empty list of distinct scalars, or a range. */
static void
axis_decode(const struct vg_ynode *k, const struct vg_ynode *n,
    struct vg_matrix *mx, struct vg_dctx *c)
{
	struct vg_strv values = VG_STRV_INIT;
	struct vg_matrix_axis *ax = NULL;
	const struct vg_ynode *el;
	size_t i, j, len;
	int before = c->errors;
	char buf[64];

	if (!name_ok(k->str)) {
		vg_dctx_error(c, k, "matrix axis name '%s' may only hold "
		    "letters, digits, '_' and '-', and must not start with a "
		    "digit or '-'", k->str);
		return;
	}
	if (n->kind == VG_Y_MAP && n->n > 0) {
		if (range_decode(k, n, &values, c) != 0)
			return;
		goto set;
	}
	if (n->kind != VG_Y_SEQ) {
		vg_dctx_error(c, n, "matrix axis '%s' must be a list of "
		    "values or {range: [start, stop]}, not %s", k->str,
		    vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	if (n->n == 0) {
		vg_dctx_error(c, n, "matrix axis '%s' has no values", k->str);
		return;
	}
	for (i = 0; i < n->n; i++) {
		el = n->items[i];
		len = vg_dctx_pushi(c, i);
		if (el->kind != VG_Y_SCALAR || vg_ynode_is_null(el) ||
		    strlen(el->str) != el->len) {
			vg_dctx_error(c, el, "'%s' must be a single value (a "
			    "string or number), not %s", c->path,
			    vg_dctx_what(el, buf, sizeof(buf)));
		} else {
			for (j = 0; j < values.n; j++)
				if (strcmp(values.v[j], el->str) == 0)
					break;
			if (j < values.n)
				vg_dctx_error(c, el, "value '%s' appears "
				    "twice in matrix axis '%s'", el->str,
				    k->str);
			else
				vg_strv_push(&values, el->str);
		}
		vg_dctx_pop(c, len);
	}
	if (c->errors != before) {
		vg_strv_release(&values);
		return;
	}
set:
	for (i = 0; i < mx->naxes; i++)
		if (strcmp(mx->axes[i].name, k->str) == 0)
			ax = &mx->axes[i];
	if (ax == NULL) {
		mx->axes = vg_xrealloc(mx->axes,
		    (mx->naxes + 1) * sizeof(*mx->axes));
		ax = &mx->axes[mx->naxes++];
		memset(ax, 0, sizeof(*ax));
		ax->name = vg_xstrdup(k->str);
	}
	vg_strv_release(&ax->values);
	ax->values = values;
	ax->loc = (struct vg_loc){ c->file, k->line, k->col };
}

/* Decodes the matrix, merging axes by name. */
static void
matrix_decode(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	struct vg_matrix *mx = p;
	const struct vg_ynode *k, *v;
	size_t i, len;
	char buf[64];

	(void)f;
	if (vg_ynode_is_null(n))
		return;
	if (n->kind != VG_Y_MAP) {
		vg_dctx_error(c, n, "'matrix' must be a mapping of axis names "
		    "to lists of values, not %s",
		    vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	for (i = 0; i < n->n; i++) {
		k = n->items[2 * i];
		v = n->items[2 * i + 1];
		len = vg_dctx_push(c, k->str);
		if (strcmp(k->str, "include") == 0)
			combos_decode(v, &mx->include, &mx->ninclude, c);
		else if (strcmp(k->str, "exclude") == 0)
			combos_decode(v, &mx->exclude, &mx->nexclude, c);
		else
			axis_decode(k, v, mx, c);
		vg_dctx_pop(c, len);
	}
}

/* Writes include or exclude. */
static void
combos_encode(const char *key, const struct vg_kvs *v, size_t n,
    struct vg_json_writer *w)
{
	size_t i, j;

	if (n == 0)
		return;
	vg_json_key(w, key);
	vg_json_arr_begin(w);
	for (i = 0; i < n; i++) {
		vg_json_obj_begin(w);
		for (j = 0; j < v[i].n; j++) {
			vg_json_key(w, v[i].v[j].key);
			vg_json_str(w, v[i].v[j].value);
		}
		vg_json_obj_end(w);
	}
	vg_json_arr_end(w);
}

static void
matrix_encode(const struct vg_field *f, const void *p,
    struct vg_json_writer *w)
{
	const struct vg_matrix *mx = p;
	size_t i, j;

	(void)f;
	vg_json_obj_begin(w);
	for (i = 0; i < mx->naxes; i++) {
		vg_json_key(w, mx->axes[i].name);
		vg_json_arr_begin(w);
		for (j = 0; j < mx->axes[i].values.n; j++)
			vg_json_str(w, mx->axes[i].values.v[j]);
		vg_json_arr_end(w);
	}
	combos_encode("include", mx->include, mx->ninclude, w);
	combos_encode("exclude", mx->exclude, mx->nexclude, w);
	vg_json_obj_end(w);
}

static void
matrix_release(const struct vg_field *f, void *p)
{
	struct vg_matrix *mx = p;
	size_t i;

	(void)f;
	for (i = 0; i < mx->naxes; i++) {
		free(mx->axes[i].name);
		vg_strv_release(&mx->axes[i].values);
	}
	free(mx->axes);
	mx->axes = NULL;
	mx->naxes = 0;
	combos_release(&mx->include, &mx->ninclude);
	combos_release(&mx->exclude, &mx->nexclude);
}

static const struct vg_field_ops matrix_ops = {
	.decode = matrix_decode,
	.encode = matrix_encode,
	.release = matrix_release,
};

/* ---- outputs: a list of globs, or a mapping ---- */

static const char *const out_when_names[] = { "always", "success",
	"failure", NULL };
static const int out_when_values[] = { VG_OUT_ALWAYS, VG_OUT_SUCCESS,
	VG_OUT_FAILURE };
static const char *const out_mode_names[] = { "copy", "move", NULL };
static const int out_mode_values[] = { 0, 1 };

/* Where item i of the list n was written (n itself when it is not a
 * list), for a problem about that item. */
static const struct vg_ynode *
seq_item(const struct vg_ynode *n, size_t i)
{
	return n != NULL && n->kind == VG_Y_SEQ && i < n->n ? n->items[i] : n;
}

/* outputs.paths: relative globs that stay inside the task's trees. */
static void
check_out_paths(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_strv *sv = p;
	const struct vg_ynode *at;
	const char *g, *q;
	size_t i;

	(void)f;
	for (i = 0; i < sv->n; i++) {
		g = sv->v[i];
		at = seq_item(n, i);
		if (*g == '\0' || *g == '/') {
			vg_dctx_error(c, at, "'%s[%zu]': '%s' must be a glob "
			    "relative to the task's scratch and task "
			    "directories", c->path, i, g);
			continue;
		}
		for (q = g; q != NULL; q = strchr(q, '/'),
		    q = q != NULL ? q + 1 : NULL)
			if (strncmp(q, "..", 2) == 0 && (q[2] == '/' ||
			    q[2] == '\0')) {
				vg_dctx_error(c, at, "'%s[%zu]': '%s' leaves "
				    "the task's directories ('..')", c->path,
				    i, g);
				break;
			}
	}
}

/* outputs.dest: a well-formed ${{ }} template. */
static void
check_out_dest(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const char *const *s = p, *why = NULL;
	struct vg_sub_seg *segs = NULL;
	size_t ns = 0, bad = 0;

	(void)f;
	if (*s != NULL && vg_sub_split(*s, &segs, &ns, &bad, &why) != 0)
		vg_dctx_error(c, n, "'%s': %s at offset %zu", c->path, why,
		    bad);
	free(segs);
}

static const struct vg_section outputs_section = {
	.name = "outputs",
	.fields = (const struct vg_field[]){
		{ .key = "paths", .type = VG_F_STRV,
		  .off = OFF(vg_outputs, paths), .check = check_out_paths,
		  .help = "globs relative to the scratch and task dirs" },
		{ .key = "dest", .type = VG_F_STR,
		  .off = OFF(vg_outputs, dest), .check = check_out_dest,
		  .help = "where they go (${{ }}; default tasks/<i>/outputs)" },
		ENUM(vg_outputs, "when", when, "always", out_when_names,
		    out_when_values, "after which attempts"),
		BYTES(vg_outputs, "max_bytes", max_bytes, 1, BIG,
		    "at most this much per attempt (default 1G)"),
		INT(vg_outputs, "max_files", max_files, NULL, 1, 10000000,
		    "at most this many files per attempt (default 10000)"),
		ENUM(vg_outputs, "mode", move, "copy", out_mode_names,
		    out_mode_values, "copy or move the files"),
		{ .key = NULL },
	},
};

static const struct vg_field out_paths_field = {
	.key = "outputs", .type = VG_F_STRV, .off = OFF(vg_outputs, paths),
	.check = check_out_paths,
};

/* outputs: the mapping, or anything else as the list of paths (an
 * empty value is an empty list; a scalar is refused as for any list). */
static void
outputs_decode(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	if (n->kind == VG_Y_MAP)
		vg_schema_decode(&outputs_section, n, p, c);
	else
		vg_schema_decode_field(&out_paths_field, n, p, c);
}

/* The list form when only paths differ from the defaults. */
static void
outputs_encode(const struct vg_field *f, const void *p,
    struct vg_json_writer *w)
{
	const struct vg_outputs *o = p;
	size_t i;

	(void)f;
	if (o->dest != NULL || o->when != 0 || o->max_bytes != 0 ||
	    o->max_files != 0 || o->move != 0) {
		vg_schema_encode(&outputs_section, o, w);
		return;
	}
	vg_json_arr_begin(w);
	for (i = 0; i < o->paths.n; i++)
		vg_json_str(w, o->paths.v[i]);
	vg_json_arr_end(w);
}

static void
outputs_release(const struct vg_field *f, void *p)
{
	(void)f;
	vg_schema_release(&outputs_section, p);
}

static const struct vg_field_ops outputs_ops = {
	.decode = outputs_decode,
	.encode = outputs_encode,
	.release = outputs_release,
};

/* Fills *out with the destination of o's files; see manifest.h. */
int
vg_outputs_dest(const struct vg_outputs *o, const struct vg_task *t,
    const char *run_dir, const char *workdir, char **out, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_sub_seg *segs = NULL;
	const char *why = NULL, *v;
	char num[24], *nm, *tasks;
	size_t ns = 0, bad = 0, i;
	int rc = 0;

	*out = NULL;
	if (o->dest == NULL) {
		snprintf(num, sizeof(num), "%d", t->index);
		tasks = vg_path_join(run_dir, "tasks");
		nm = vg_path_join(tasks, num);
		*out = vg_path_join(nm, "outputs");
		free(tasks);
		free(nm);
		return 0;
	}
	if (vg_sub_split(o->dest, &segs, &ns, &bad, &why) != 0) {
		free(segs);
		return vg_err_set(e, VG_EINVAL, "outputs.dest '%s': %s at "
		    "offset %zu", o->dest, why, bad);
	}
	for (i = 0; i < ns && rc == 0; i++) {
		if (segs[i].kind == VG_SUB_TEXT) {
			vg_buf_add(&b, o->dest + segs[i].off, segs[i].len);
			continue;
		}
		nm = vg_xstrndup(o->dest + segs[i].off, segs[i].len);
		v = NULL;
		if (segs[i].kind == VG_SUB_INDEX) {
			snprintf(num, sizeof(num), "%d", t->index);
			v = num;
		} else if (segs[i].kind == VG_SUB_MATRIX)
			v = vg_kvs_get(&t->matrix, nm);
		else if (segs[i].kind == VG_SUB_ENV)
			v = vg_kvs_get(&t->env, nm);
		if (v == NULL)
			rc = vg_err_set(e, VG_EINVAL, "outputs.dest '%s': task "
			    "%d has no value for '%s'", o->dest, t->index, nm);
		else if (strchr(v, '/') != NULL || strcmp(v, "..") == 0)
			rc = vg_err_set(e, VG_EINVAL, "outputs.dest '%s': the "
			    "value '%s' of '%s' is not one path component",
			    o->dest, v, nm);
		else
			vg_buf_adds(&b, v);
		free(nm);
	}
	free(segs);
	if (rc == 0)
		*out = b.len > 0 && b.data[0] == '/' ? vg_xstrdup(b.data) :
		    vg_path_join(workdir, vg_buf_str(&b));
	vg_buf_release(&b);
	return rc;
}

/* ---- field checks ---- */

/* inputs: relative globs, the same for every task (no ${{ }}). */
static void
check_inputs(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_strv *sv = p;
	const struct vg_ynode *at;
	const char *g;
	size_t i;

	(void)f;
	for (i = 0; i < sv->n; i++) {
		g = sv->v[i];
		at = seq_item(n, i);
		if (*g == '\0' || *g == '/')
			vg_dctx_error(c, at, "'%s[%zu]': '%s' must be a glob "
			    "relative to the working directory", c->path, i,
			    g);
		else if (strstr(g, "${{") != NULL)
			vg_dctx_error(c, at, "'%s[%zu]': '%s': inputs are the "
			    "same for every task (no ${{ }}); list the files "
			    "of every task", c->path, i, g);
	}
}

/* version: only 1 exists. */
static void
check_version(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	if (*(int *)p != 1)
		vg_dctx_error(c, n, "unsupported manifest version %d (this "
		    "vigil reads version 1)", *(int *)p);
}

/* backend, scheduler: a plugin's alias stands for its name. */
static void
check_plugin(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_plugin *pl;
	char **s = p;

	(void)n;
	(void)c;
	pl = vg_plugin_find(strcmp(f->key, "backend") == 0 ?
	    VG_PLUGIN_BACKEND : VG_PLUGIN_SCHEDULER, *s);
	if (pl != NULL && strcmp(pl->name, *s) != 0) {
		free(*s);
		*s = vg_xstrdup(pl->name);
	}
}

/* env: names a shell can export, not vigil's own. */
static void
check_env(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_ynode *k;
	const char *s;
	size_t i;
	int ok;

	(void)f;
	(void)p;
	for (i = 0; n != NULL && n->kind == VG_Y_MAP && i < n->n; i++) {
		k = n->items[2 * i];
		ok = k->len > 0 && (isalpha((unsigned char)k->str[0]) ||
		    k->str[0] == '_');
		for (s = k->str; ok && *s != '\0'; s++)
			ok = isalnum((unsigned char)*s) || *s == '_';
		if (!ok)
			vg_dctx_error(c, k, "environment variable name '%s' "
			    "may only hold letters, digits and '_', and must "
			    "not start with a digit", k->str);
		else if (strncmp(k->str, "VIGIL_", 6) == 0)
			vg_dctx_error(c, k, "environment variable names "
			    "starting with 'VIGIL_' are reserved ('%s')",
			    k->str);
	}
}

/* A rule needs something to match. */
static void
check_rule(const struct vg_section *s, const struct vg_ynode *n, void *base,
    struct vg_dctx *c)
{
	const struct vg_rule *r = base;

	(void)s;
	if (r->match == NULL && r->category == NULL && r->command == NULL)
		vg_dctx_error(c, n, "'%s' needs 'match' (a glob on each "
		    "simple command), 'command' (a glob on the whole command) "
		    "or 'category'", c->path);
}

/* retry: the first delay cannot exceed the cap. */
static void
check_retry(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_retry *r = base;

	(void)s;
	if (r->backoff > r->backoff_max)
		vg_dctx_error(c, n, "'retry.backoff' (%gs) is larger than "
		    "'retry.backoff_max' (%gs)", r->backoff, r->backoff_max);
}

/* ---- tables ---- */

static const char *const retry_on_names[] = { "failed", "timeout", "oom",
	"node_fail", "preempted", "lost", "backend_error", NULL };
static const int retry_on_values[] = { VG_RETRY_FAILED, VG_RETRY_TIMEOUT,
	VG_RETRY_OOM, VG_RETRY_NODE_FAIL, VG_RETRY_PREEMPTED, VG_RETRY_LOST,
	VG_RETRY_BACKEND_ERROR };
static const char *const mode_names[] = { "auto-deny", "auto-approve",
	"interactive", NULL };
static const char *const keep_names[] = { "on-failure", "always", "never",
	NULL };
static const int keep_values[] = { VG_KEEP_ON_FAILURE, VG_KEEP_ALWAYS,
	VG_KEEP_NEVER };
static const char *const level_names[] = { "standard", "none", "strict",
	NULL };
static const int level_values[] = { VG_ISO_STANDARD, VG_ISO_NONE,
	VG_ISO_STRICT };
static const char *const output_names[] = { "files", "stream", NULL };
static const int output_values[] = { VG_OUTPUT_FILES, VG_OUTPUT_STREAM };
static const char *const ptrace_names[] = { "children", "deny", NULL };
static const char *const workdir_names[] = { "write", "read", NULL };

static const char *const launcher_names[] = { "srun", "none", NULL };

/*
 * resources: parallel tasks, the combinations Slurm refuses or that
 * cannot mean what they say (docs/schedulers/slurm.md lists them).
 */
static void
check_resources_tasks(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_resources *r = base;

	(void)s;
	if (r->cpus > 0 && r->cpus_per_task > 0 && r->cpus != r->cpus_per_task)
		vg_dctx_error(c, n, "'resources.cpus' (%d) and "
		    "'resources.cpus_per_task' (%d) are the same request; "
		    "give one", r->cpus, r->cpus_per_task);
	if (r->memory > 0 && r->mem_per_cpu > 0)
		vg_dctx_error(c, n, "'resources.memory' (--mem) and "
		    "'resources.mem_per_cpu' (--mem-per-cpu) are mutually "
		    "exclusive in Slurm; give one");
	if (r->ntasks > 0 && r->nodes > r->ntasks)
		vg_dctx_error(c, n, "'resources.nodes' (%d) is more than "
		    "'resources.ntasks' (%d): every node needs a task",
		    r->nodes, r->ntasks);
	if (r->ntasks > 0 && r->ntasks_per_node > r->ntasks)
		vg_dctx_error(c, n, "'resources.ntasks_per_node' (%d) is more "
		    "than 'resources.ntasks' (%d)", r->ntasks_per_node,
		    r->ntasks);
	if (r->ntasks > 0 && r->nodes > 0 && r->ntasks_per_node > 0 &&
	    (long long)r->nodes * r->ntasks_per_node < r->ntasks)
		vg_dctx_error(c, n, "'resources.ntasks' (%d) does not fit in "
		    "'resources.nodes' (%d) x 'resources.ntasks_per_node' "
		    "(%d)", r->ntasks, r->nodes, r->ntasks_per_node);
	if (r->gpus > 0 && r->gpus_per_task > 0)
		vg_dctx_error(c, n, "'resources.gpus' (--gres=gpu, per node) "
		    "and 'resources.gpus_per_task' (--gpus-per-task) cannot "
		    "both be given; give one");
	if (r->gpus_per_task > 0 && r->ntasks == 0 &&
	    !(r->nodes > 0 && r->ntasks_per_node > 0))
		vg_dctx_error(c, n, "'resources.gpus_per_task' needs a task "
		    "count: 'resources.ntasks', or 'resources.nodes' with "
		    "'resources.ntasks_per_node' (sbatch: --gpus-per-task "
		    "requires a task count)");
}

/* Every row takes ${{ matrix.NAME }} (tmpl_off): expand.c decodes it
 * per task with the row's type and range. */
const struct vg_section vg_resources_section = {
	.name = "resources",
	.check = check_resources_tasks,
	.tmpl_off = 1 + OFF(vg_resources, tmpl),
	.fields = (const struct vg_field[]){
		INT(vg_resources, "cpus", cpus, NULL, 1, 1048576,
		    "CPUs per task"),
		BYTES(vg_resources, "memory", memory, 1, BIG,
		    "memory per task"),
		INT(vg_resources, "gpus", gpus, NULL, 0, 4096,
		    "GPUs per task"),
		DURS(vg_resources, "time", time, 1, 100 * YEAR,
		    "time limit per task (Slurm --time, Grid Engine h_rt)"),
		SLURMSTR(vg_resources, "partition", partition,
		    "partition or queue (Slurm -p, Grid Engine -q)"),
		SLURMSTR(vg_resources, "account", account,
		    "account charged (Slurm and Grid Engine -A)"),
		SLURMSTR(vg_resources, "qos", qos,
		    "QOS (Slurm --qos) or project (Grid Engine -P)"),
		SLURMSTR(vg_resources, "constraint", constraint,
		    "Slurm node features"),
		SLURMSTR(vg_resources, "gpu_type", gpu_type,
		    "GPU model (Slurm gres type, cloud GPU type)"),
		/* Parallel tasks; checked by check_resources_tasks. */
		INT(vg_resources, "nodes", nodes, NULL, 1, 1000000,
		    "nodes per task (Slurm --nodes)"),
		INT(vg_resources, "ntasks", ntasks, NULL, 1, 10000000,
		    "Slurm tasks (MPI ranks) per task"),
		INT(vg_resources, "ntasks_per_node", ntasks_per_node, NULL, 1,
		    1000000, "Slurm tasks per node"),
		INT(vg_resources, "cpus_per_task", cpus_per_task, NULL, 1,
		    1048576, "CPUs per Slurm task (as cpus)"),
		BYTES(vg_resources, "mem_per_cpu", mem_per_cpu, 1, BIG,
		    "memory per CPU (Slurm --mem-per-cpu)"),
		INT(vg_resources, "gpus_per_task", gpus_per_task, NULL, 1,
		    4096, "GPUs per Slurm task"),
		BOOL(vg_resources, "exclusive", exclusive, "false",
		    "whole nodes (Slurm --exclusive)"),
		CHOICE(vg_resources, "launcher", launcher, NULL,
		    launcher_names, "srun starts one rank per Slurm task; "
		    "default srun when ntasks > 1"),
		{ .key = NULL },
	},
};

/* True when the row f of r holds a value (not its unset zero). */
static int
row_set(const struct vg_field *f, const struct vg_resources *r)
{
	const char *p = (const char *)r + f->off;
	uint64_t u;
	int i;

	switch (f->type) {
	case VG_F_INT:
	case VG_F_BOOL:
	case VG_F_ENUM:
		memcpy(&i, p, sizeof(i));
		return i != 0;
	case VG_F_BYTES:
	case VG_F_U64:
	case VG_F_DUR_U64:
		memcpy(&u, p, sizeof(u));
		return u != 0;
	case VG_F_STR:
		return *(char *const *)(const void *)p != NULL;
	default:
		return 0;
	}
}

int
vg_resources_refuse_rows(const struct vg_manifest *m, const char *who,
    const char *const *rows, struct vg_diag *d)
{
	static const char *const always[] = { "cpus", "memory", "gpus",
	    "time", NULL };
	const struct vg_resources *r = &m->resources;
	const struct vg_field *f;
	struct vg_buf ok = VG_BUF_INIT;
	struct vg_loc loc;
	size_t i;
	int rc = 0, takes;

	for (i = 0; always[i] != NULL; i++)
		vg_buf_printf(&ok, "%s%s", i > 0 ? ", " : "", always[i]);
	for (i = 0; rows != NULL && rows[i] != NULL; i++)
		vg_buf_printf(&ok, ", %s", rows[i]);
	for (f = vg_resources_section.fields; f->key != NULL; f++) {
		takes = 0;
		for (i = 0; always[i] != NULL && !takes; i++)
			takes = strcmp(always[i], f->key) == 0;
		for (i = 0; rows != NULL && rows[i] != NULL && !takes; i++)
			takes = strcmp(rows[i], f->key) == 0;
		if (takes || (!row_set(f, r) &&
		    vg_kvs_get(&r->tmpl, f->key) == NULL))
			continue;
		vg_diag_add(d, vg_manifest_locf(m, &loc, "resources.%s",
		    f->key), "'resources.%s' is no request scheduler '%s' "
		    "can make (it would be dropped): remove it; %s takes "
		    "%s", f->key, who, who, vg_buf_str(&ok));
		rc = VG_EINVAL;
	}
	vg_buf_release(&ok);
	return rc;
}

static const struct vg_section retry_section = {
	.name = "retry",
	.check = check_retry,
	.fields = (const struct vg_field[]){
		INT(vg_retry, "max", max, "0", 0, 100,
		    "extra attempts after the first"),
		{ .key = "on", .type = VG_F_FLAGS, .off = OFF(vg_retry, on),
		  .def = "failed,timeout,oom,node_fail,preempted,lost,"
		      "backend_error",
		  .values = retry_on_names, .ivalues = retry_on_values,
		  .help = "which outcomes are retried" },
		DUR(vg_retry, "backoff", backoff, "1", 0, 86400,
		    "delay before the first retry; doubles each time"),
		DUR(vg_retry, "backoff_max", backoff_max, "300", 0, 86400,
		    "cap on the delay"),
		FLOAT(vg_retry, "memory_factor", memory_factor, "1", 1, 100,
		    "memory multiplier after an OOM"),
		FLOAT(vg_retry, "time_factor", time_factor, "1", 1, 100,
		    "time multiplier after a timeout"),
		{ .key = NULL },
	},
};

static const struct vg_section rule_section = {
	.name = "rule",
	.loc_off = 1 + OFF(vg_rule, loc),
	.check = check_rule,
	.fields = (const struct vg_field[]){
		STR(vg_rule, "id", id, "name shown in audits"),
		STR(vg_rule, "match", match, "glob on the normalised command"),
		STR(vg_rule, "category", category, "command category"),
		STR(vg_rule, "reason", reason, "why; shown on denial"),
		STR(vg_rule, "command", command, "allow: glob on the whole "
		    "command, blanks collapsed"),
		STR(vg_rule, "url", url, "allow: remote-code from this URL "
		    "prefix"),
		{ .key = NULL },
	},
};

static const struct vg_section policy_section = {
	.name = "policy",
	.fields = (const struct vg_field[]){
		CHOICE(vg_policy_conf, "mode", mode, NULL, mode_names,
		    "what to do with commands no rule decides"),
		STR(vg_policy_conf, "file", file, "policy file: adds rules "
		    "over the site's (in the site config: the site's own)"),
		STR(vg_policy_conf, "audit_log", audit_log,
		    "JSON-lines audit file"),
		{ .key = "allow", .type = VG_F_LIST,
		  .off = OFF(vg_policy_conf, allow),
		  .off2 = OFF(vg_policy_conf, nallow),
		  .size = sizeof(struct vg_rule), .sub = &rule_section,
		  .help = "rules that allow commands" },
		{ .key = "deny", .type = VG_F_LIST,
		  .off = OFF(vg_policy_conf, deny),
		  .off2 = OFF(vg_policy_conf, ndeny),
		  .size = sizeof(struct vg_rule), .sub = &rule_section,
		  .help = "rules that deny commands" },
		{ .key = NULL },
	},
};

static const struct vg_section scratch_section = {
	.name = "scratch",
	.fields = (const struct vg_field[]){
		STR(vg_scratch_conf, "path", path, "base directory"),
		ENUM(vg_scratch_conf, "keep", keep, "on-failure", keep_names,
		    keep_values, "when to keep a task's scratch directory"),
		BYTES(vg_scratch_conf, "min_free", min_free, 0, BIG,
		    "free space required"),
		{ .key = NULL },
	},
};

/* isolation.capabilities: each a capability's name. */
static void
check_caps(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	struct vg_buf valid = VG_BUF_INIT;
	const char *bad;
	uint64_t mask;

	(void)f;
	if (vg_cap_mask(p, &mask, &bad) == 0)
		return;
	vg_cap_list(&valid);
	vg_dctx_error(c, n, "'%s': '%s' is not a capability (valid, with or "
	    "without cap_: %s)", c->path, bad, vg_buf_str(&valid));
	vg_buf_release(&valid);
}

/* ---- isolation.network ---- */

#define NET_WANT	"none, host, true, false or a mapping {allow: [HOST, " \
			"HOST:PORT, *.DOMAIN, ...], deny: [...]}"

enum vg_net_mode
vg_isolation_net(const struct vg_isolation_conf *iso)
{
	if (iso->network.mode != VG_NET_LEVEL)
		return iso->network.mode;
	return iso->level == VG_ISO_STRICT ? VG_NET_NONE : VG_NET_HOST;
}

const char *
vg_net_mode_name(enum vg_net_mode mode)
{
	switch (mode) {
	case VG_NET_LEVEL:	return "by level";
	case VG_NET_NONE:	return "none";
	case VG_NET_HOST:	return "host";
	case VG_NET_ALLOW:	return "allow";
	}
	return "?";
}

/* Decodes isolation.network.allow or .deny (n, a list of patterns) into
 * sv; problems name the item and what a pattern may be. */
static void
net_list_decode(const struct vg_ynode *n, struct vg_strv *sv,
    struct vg_dctx *c)
{
	struct vg_egress_pat pat;
	char why[512], buf[64];
	size_t i, len;

	if (n->kind != VG_Y_SEQ) {
		vg_dctx_error(c, n, "'%s' must be a list of host patterns, "
		    "not %s", c->path, vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	for (i = 0; i < n->n; i++) {
		const struct vg_ynode *el = n->items[i];

		len = vg_dctx_pushi(c, i);
		if (el->kind != VG_Y_SCALAR || vg_ynode_is_null(el) ||
		    strlen(el->str) != el->len)
			vg_dctx_error(c, el, "'%s' must be a host pattern, "
			    "not %s", c->path, vg_dctx_what(el, buf,
			    sizeof(buf)));
		else if (vg_egress_pat_parse(el->str, &pat, why,
		    sizeof(why)) != 0)
			vg_dctx_error(c, el, "'%s': '%s' is not a host "
			    "pattern: %s", c->path, el->str, why);
		else
			vg_strv_push(sv, el->str);
		vg_dctx_pop(c, len);
	}
}

/* isolation.network: a mode's name, a boolean (the older form) or the
 * mapping of an allow-list; replaces what an earlier layer set. */
static void
net_decode(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	struct vg_net_conf *nc = p, out;
	const struct vg_ynode *k, *v;
	char buf[64];
	size_t i, len;
	int before = c->errors;

	memset(&out, 0, sizeof(out));
	if (n->kind == VG_Y_SCALAR && !vg_ynode_is_null(n)) {
		if (strcmp(n->str, "none") == 0)
			out.mode = VG_NET_NONE;
		else if (strcmp(n->str, "host") == 0 ||
		    strcasecmp(n->str, "true") == 0 ||
		    strcasecmp(n->str, "yes") == 0 ||
		    strcasecmp(n->str, "on") == 0)
			out.mode = VG_NET_HOST;
		else if (strcasecmp(n->str, "false") == 0 ||
		    strcasecmp(n->str, "no") == 0 ||
		    strcasecmp(n->str, "off") == 0)
			out.mode = VG_NET_LEVEL;
		else {
			vg_dctx_error(c, n, "'%s': '%s' is not a network "
			    "mode (valid: %s)", c->path, n->str, NET_WANT);
			return;
		}
	} else if (n->kind == VG_Y_MAP) {
		out.mode = VG_NET_ALLOW;
		for (i = 0; i < n->n; i++) {
			k = n->items[2 * i];
			v = n->items[2 * i + 1];
			len = vg_dctx_push(c, k->str);
			if (strcmp(k->str, "allow") == 0)
				net_list_decode(v, &out.allow, c);
			else if (strcmp(k->str, "deny") == 0)
				net_list_decode(v, &out.deny, c);
			else
				vg_dctx_error(c, k, "unknown key '%s' (valid: "
				    "allow, deny)", c->path);
			vg_dctx_pop(c, len);
		}
	} else {
		vg_dctx_error(c, n, "'%s' must be %s, not %s", c->path,
		    NET_WANT, vg_dctx_what(n, buf, sizeof(buf)));
		return;
	}
	if (c->errors != before) {
		vg_strv_release(&out.allow);
		vg_strv_release(&out.deny);
		return;
	}
	f->ops->release(f, nc);
	*nc = out;
}

static void
net_encode(const struct vg_field *f, const void *p, struct vg_json_writer *w)
{
	const struct vg_net_conf *nc = p;
	size_t i;

	(void)f;
	if (nc->mode == VG_NET_LEVEL) {
		vg_json_bool(w, 0);
		return;
	}
	if (nc->mode != VG_NET_ALLOW) {
		vg_json_str(w, vg_net_mode_name(nc->mode));
		return;
	}
	vg_json_obj_begin(w);
	vg_json_key(w, "allow");
	vg_json_arr_begin(w);
	for (i = 0; i < nc->allow.n; i++)
		vg_json_str(w, nc->allow.v[i]);
	vg_json_arr_end(w);
	vg_json_key(w, "deny");
	vg_json_arr_begin(w);
	for (i = 0; i < nc->deny.n; i++)
		vg_json_str(w, nc->deny.v[i]);
	vg_json_arr_end(w);
	vg_json_obj_end(w);
}

static void
net_release(const struct vg_field *f, void *p)
{
	struct vg_net_conf *nc = p;

	(void)f;
	vg_strv_release(&nc->allow);
	vg_strv_release(&nc->deny);
	nc->mode = VG_NET_LEVEL;
}

static const struct vg_field_ops net_ops = {
	.decode = net_decode,
	.encode = net_encode,
	.release = net_release,
};

/*
 * isolation.network against the level and the backend: no sandbox
 * (level none) cannot take the network away, none needs a backend that
 * can (VG_PLUGIN_NONET), and an allow-list one that runs vigil's egress
 * proxy (VG_PLUGIN_EGRESS), in a run or a session; refused here rather
 * than run with more network than asked.
 */
static void
check_network(const struct vg_manifest *m, const struct vg_plugin *be,
    int session, struct vg_diag *d)
{
	enum vg_net_mode net = vg_isolation_net(&m->isolation);
	struct vg_loc loc;

	if (m->isolation.network.mode == VG_NET_LEVEL || net == VG_NET_HOST)
		return;
	vg_manifest_loc(m, "isolation.network", &loc);
	if (m->isolation.level == VG_ISO_NONE)
		vg_diag_add(d, &loc, "isolation.network '%s' needs a sandbox: "
		    "isolation.level 'none' leaves the host's network (use "
		    "level standard or strict, or network host)",
		    vg_net_mode_name(net));
	else if (session && be != NULL && (be->flags & (net == VG_NET_NONE ?
	    VG_PLUGIN_NONET_RUNS : VG_PLUGIN_EGRESS_RUNS)))
		vg_diag_add(d, &loc, "isolation.network '%s' is enforced by "
		    "backend '%s' in runs, not in sessions (docs/egress.md); "
		    "use network host for the session, or the local backend",
		    vg_net_mode_name(net), be->name);
	else if (net == VG_NET_NONE && be != NULL &&
	    !(be->flags & VG_PLUGIN_NONET))
		vg_diag_add(d, &loc, "isolation.network 'none' is not "
		    "enforced by backend '%s': its tasks have the network its "
		    "host or provider gives (docs/egress.md); use a backend "
		    "that takes it away (local, docker, singularity, daytona) "
		    "or remove it", be->name);
	else if (net == VG_NET_ALLOW && be != NULL &&
	    !(be->flags & VG_PLUGIN_EGRESS))
		vg_diag_add(d, &loc, "isolation.network: an allow-list is not "
		    "enforced by backend '%s' (docs/egress.md lists the "
		    "backends that run the egress proxy); use none or host",
		    be->name);
}

static const char *const net_max_names[] = { "host", "allow", "none", NULL };

static const struct vg_section isolation_section = {
	.name = "isolation",
	.fields = (const struct vg_field[]){
		ENUM(vg_isolation_conf, "level", level, "standard",
		    level_names, level_values, "confinement level"),
		BOOL(vg_isolation_conf, "required", required, "false",
		    "fail instead of running with less isolation"),
		STRV(vg_isolation_conf, "writable", writable,
		    "extra writable paths"),
		STRV(vg_isolation_conf, "readable", readable,
		    "extra readable paths (strict)"),
		CHOICE(vg_isolation_conf, "ptrace", ptrace, "children",
		    ptrace_names, "ptrace scope"),
		{ .key = "network", .type = VG_F_CUSTOM,
		  .off = OFF(vg_isolation_conf, network), .ops = &net_ops,
		  .help = "what tasks reach: none, host or {allow: [...], "
		  "deny: [...]} (false: by level, true: host)" },
		{ .key = "network_max", .type = VG_F_STR,
		  .off = OFF(vg_isolation_conf, network_max), .def = "host",
		  .values = net_max_names, .flags = VG_FF_CONFIGONLY,
		  .help = "the widest isolation.network a later layer may ask "
		  "for (site config: host, allow or none)" },
		STRV(vg_isolation_conf, "devices", devices,
		    "device paths tasks may open read-write (globs)"),
		{ .key = "capabilities", .type = VG_F_STRV,
		  .off = OFF(vg_isolation_conf, capabilities),
		  .check = check_caps,
		  .help = "capabilities tasks keep (host access: the policy "
		  "must allow it)" },
		STRV(vg_isolation_conf, "sockets", sockets,
		    "host sockets tasks may connect to (host access)"),
		CHOICE(vg_isolation_conf, "workdir", workdir, NULL,
		    workdir_names, "the working directory: write (default "
		    "at standard; .git and start-up files stay read-only) "
		    "or read"),
		{ .key = NULL },
	},
};

static const struct vg_section limits_section = {
	.name = "limits",
	.fields = (const struct vg_field[]){
		DURS(vg_limits, "cpu_time", cpu_time, 1, 100 * YEAR,
		    "RLIMIT_CPU"),
		BYTES(vg_limits, "address_space", address_space, 1, BIG,
		    "RLIMIT_AS"),
		U64(vg_limits, "nofile", nofile, 1, BIG, "RLIMIT_NOFILE"),
		U64(vg_limits, "nproc", nproc, 1, BIG, "RLIMIT_NPROC"),
		BYTES(vg_limits, "fsize", fsize, 1, BIG, "RLIMIT_FSIZE"),
		{ .key = "core", .type = VG_F_BYTES,
		  .off = OFF(vg_limits, core), .min = 0, .max = BIG,
		  .flags = VG_FF_SETFLAG, .off2 = OFF(vg_limits, core_set),
		  .help = "RLIMIT_CORE (default 0: no core files)" },
		/* 4194304: the kernel's PID_MAX_LIMIT, the most pids.max
		 * takes (backends/cgroup.h). */
		U64(vg_limits, "pids", pids, 1, 4194304,
		    "processes and threads of the task (cgroup pids.max)"),
		{ .key = NULL },
	},
};


/* The manifest's own top-level rows; the plugins' sections follow them
 * in the table that build_schema() makes. */
/* VG_KILL_GRACE_DEFAULT as the schema's default text. */
#define GRACE_TEXT_(n)	#n
#define GRACE_TEXT_OF(n)	GRACE_TEXT_(n)
#define GRACE_TEXT	GRACE_TEXT_OF(VG_KILL_GRACE_DEFAULT)

static const struct vg_field core_fields[] = {
	{ .key = "version", .type = VG_F_INT,
	  .off = OFF(vg_manifest, version), .def = "1",
	  .check = check_version, .help = "manifest format; 1" },
	{ .key = "name", .type = VG_F_STR,
	  .off = OFF(vg_manifest, name), .flags = VG_FF_NOCONFIG,
	  .help = "run name" },
	/* values and default filled from the plugins */
	{ .key = "scheduler", .type = VG_F_STR,
	  .off = OFF(vg_manifest, scheduler), .check = check_plugin,
	  .help = "how tasks are scheduled" },
	{ .key = "backend", .type = VG_F_STR,
	  .off = OFF(vg_manifest, backend), .check = check_plugin,
	  .help = "where tasks run" },
	STR(vg_manifest, "image", image, "container image"),
	{ .key = "command", .type = VG_F_CUSTOM,
	  .off = OFF(vg_manifest, command), .ops = &command_ops,
	  .flags = VG_FF_NOCONFIG,
	  .help = "a string for /bin/sh -c, or an argv list" },
	{ .key = "env", .type = VG_F_KVS,
	  .off = OFF(vg_manifest, env), .check = check_env,
	  .help = "environment of every task" },
	{ .key = "matrix", .type = VG_F_CUSTOM,
	  .off = OFF(vg_manifest, matrix), .ops = &matrix_ops,
	  .flags = VG_FF_NOCONFIG,
	  .help = "axes, include, exclude" },
	SECTION(vg_manifest, "resources", resources,
	    &vg_resources_section, "what each task needs"),
	DUR(vg_manifest, "timeout", timeout, NULL, 0, 100 * YEAR,
	    "wall-clock limit per attempt"),
	DUR(vg_manifest, "kill_grace", kill_grace, GRACE_TEXT, 0, 3600,
	    "SIGTERM to SIGKILL delay"),
	SECTION(vg_manifest, "retry", retry, &retry_section,
	    "retries"),
	SECTION(vg_manifest, "policy", policy, &policy_section,
	    "policy gate"),
	SECTION(vg_manifest, "scratch", scratch, &scratch_section,
	    "per-task scratch"),
	{ .key = "outputs", .type = VG_F_CUSTOM,
	  .off = OFF(vg_manifest, outputs), .ops = &outputs_ops,
	  .help = "globs collected after each attempt, or {paths, dest, "
	      "when, max_bytes, max_files, mode}" },
	STR(vg_manifest, "workdir", workdir, "working directory"),
	SECTION(vg_manifest, "isolation", isolation,
	    &isolation_section, "kernel confinement"),
	SECTION(vg_manifest, "limits", limits, &limits_section,
	    "rlimits"),
	SECTION(vg_manifest, "concurrency", concurrency,
	    &vg_concurrency_section, "overlap control of runs"),
	SECTION(vg_manifest, "notify", notify, &vg_notify_section,
	    "who hears of a run's end"),
	{ .key = "after", .type = VG_F_CUSTOM,
	  .off = OFF(vg_manifest, after), .ops = &vg_after_ops,
	  .flags = VG_FF_NOCONFIG,
	  .help = "runs to wait for: ids or names, each ok|any|notok" },
	ENUM(vg_manifest, "output", output, "files", output_names,
	    output_values, "task output: files per task, or stream "
	    "(framed files per run)"),
	BOOL(vg_manifest, "reuse", reuse, "false", "reuse an earlier run's "
	    "successful attempt with the same key instead of running"),
	{ .key = "inputs", .type = VG_F_STRV,
	  .off = OFF(vg_manifest, inputs), .check = check_inputs,
	  .help = "globs of the files the tasks read, relative to the "
	      "working directory (their contents are in the reuse key)" },
};

#define NCORE		(sizeof(core_fields) / sizeof(core_fields[0]))
#define MAX_SECTIONS	32	/* plugin sections in one program */
#define MAX_NAMES	32	/* plugin names and aliases of one kind */

/* The whole top-level table, built once from core_fields and the linked
 * plugins (vigil runs the manifest code on one thread). */
static struct {
	int				 built;
	struct vg_field			 fields[NCORE + MAX_SECTIONS + 1];
	struct vg_section		 top;
	const struct vg_msection	*sec[MAX_SECTIONS];
	size_t				 off[MAX_SECTIONS];	/* in ext */
	size_t				 nsec;
	const char			*names[2][MAX_NAMES + 1];
} schema;

/* Programming errors in the plugin tables: say so and stop. */
static void __attribute__((noreturn))
schema_bug(const char *what, const char *name)
{
	fprintf(stderr, "vigil: internal error: plugin table: %s '%s'\n",
	    what, name);
	abort();
}

/* Adds p's names to the list of its kind. */
static void
schema_add_names(const struct vg_plugin *p)
{
	const char **names = schema.names[p->kind];
	size_t n = 0;

	while (names[n] != NULL)
		n++;
	if (n + (p->alias != NULL ? 2 : 1) > MAX_NAMES)
		schema_bug("too many names at", p->name);
	names[n++] = p->name;
	if (p->alias != NULL)
		names[n++] = p->alias;
}

/* Adds section s (once, however many plugins list it) after the rows so
 * far, at the next aligned offset of the manifest's ext area. */
static void
schema_add_section(const struct vg_msection *s, size_t *nf, size_t *used)
{
	size_t i, at;

	for (i = 0; i < schema.nsec; i++)
		if (schema.sec[i] == s)
			return;
	at = (*used + 15) & ~(size_t)15;
	if (schema.nsec == MAX_SECTIONS || at + s->size > VG_MANIFEST_EXT)
		schema_bug("no room for section", s->key);
	schema.sec[schema.nsec] = s;
	schema.off[schema.nsec++] = at;
	*used = at + s->size;
	schema.fields[(*nf)++] = (struct vg_field){
		.key = s->key, .alias = s->alias, .type = VG_F_SECTION,
		.off = OFF(vg_manifest, ext) + at, .sub = s->schema,
		.help = s->help };
}

/* Builds the top-level table on first use. */
static void
build_schema(void)
{
	const struct vg_plugin *p, *def;
	const struct vg_msection *const *s;
	size_t i, nf = NCORE, used = 0;

	if (schema.built)
		return;
	memcpy(schema.fields, core_fields, sizeof(core_fields));
	for (i = 0; (p = vg_plugin_at(i)) != NULL; i++) {
		schema_add_names(p);
		for (s = p->sections; s != NULL && *s != NULL; s++)
			schema_add_section(*s, &nf, &used);
	}
	schema.fields[nf] = (struct vg_field){ .key = NULL };
	for (i = 0; i < NCORE; i++) {
		struct vg_field *f = &schema.fields[i];
		enum vg_plugin_kind k;

		if (strcmp(f->key, "backend") == 0)
			k = VG_PLUGIN_BACKEND;
		else if (strcmp(f->key, "scheduler") == 0)
			k = VG_PLUGIN_SCHEDULER;
		else
			continue;
		if ((def = vg_plugin_default(k)) == NULL)
			schema_bug("no default plugin for", f->key);
		f->def = def->name;
		f->values = schema.names[k];
	}
	schema.top = (struct vg_section){ .name = "",
	    .fields = schema.fields };
	schema.built = 1;
}

const struct vg_section *
vg_manifest_schema(void)
{
	build_schema();
	return &schema.top;
}

void *
vg_manifest_conf(const struct vg_manifest *m, const struct vg_msection *s)
{
	size_t i;

	build_schema();
	for (i = 0; i < schema.nsec; i++)
		if (schema.sec[i] == s)
			return (void *)(uintptr_t)(m->ext + schema.off[i]);
	schema_bug("section of no linked plugin", s->key);
}

/* ---- life cycle ---- */

struct vg_manifest *
vg_manifest_new(void)
{
	struct vg_manifest *m = vg_xcalloc(1, sizeof(*m));

	vg_schema_defaults(vg_manifest_schema(), m);
	return m;
}

const char *
vg_manifest_source(struct vg_manifest *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->sources.n; i++)
		if (strcmp(m->sources.v[i], name) == 0)
			return m->sources.v[i];
	vg_strv_push(&m->sources, name);
	return m->sources.v[m->sources.n - 1];
}

void
vg_manifest_free(struct vg_manifest *m)
{
	size_t i;

	if (m == NULL)
		return;
	vg_schema_release(vg_manifest_schema(), m);
	free(m->policy.site_file);
	for (i = 0; i < m->locs.n; i++)
		free(m->locs.v[i].path);
	free(m->locs.v);
	free(m->file);
	vg_strv_release(&m->sources);
	free(m);
}

/* ---- checks across fields and layers ---- */

/* The value node of key in the last layer that set it, or NULL. */
static const struct vg_ynode *
layer_find(const struct vg_mload *ls, const char *key, const char **file)
{
	const struct vg_ynode *n;
	size_t i;

	for (i = ls->nlayers; i-- > 0;) {
		if (ls->layers[i].tree == NULL)
			continue;
		n = vg_ynode_get(ls->layers[i].tree->root, key);
		if (n != NULL) {
			*file = ls->layers[i].file;
			return n;
		}
	}
	return NULL;
}

/* Reports at node n of file (or at the file when n is NULL). */
static void
report(struct vg_diag *d, const char *file, const struct vg_ynode *n,
    size_t off, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
report(struct vg_diag *d, const char *file, const struct vg_ynode *n,
    size_t off, const char *fmt, ...)
{
	struct vg_loc loc = { file, 0, 0 };
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	if (n != NULL)
		vg_ynode_loc_at(n, off, file, &loc);
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_diag_add(d, &loc, "%s", vg_buf_str(&b));
	vg_buf_release(&b);
}

/* True when name is an axis or a key of some include. */
static int
matrix_has(const struct vg_matrix *mx, const char *name, size_t len)
{
	size_t i, j;

	for (i = 0; i < mx->naxes; i++)
		if (strlen(mx->axes[i].name) == len &&
		    strncmp(mx->axes[i].name, name, len) == 0)
			return 1;
	for (i = 0; i < mx->ninclude; i++)
		for (j = 0; j < mx->include[i].n; j++)
			if (strlen(mx->include[i].v[j].key) == len &&
			    strncmp(mx->include[i].v[j].key, name, len) == 0)
				return 1;
	return 0;
}

/* Every name ${{ matrix.X }} may use, for did-you-mean. */
static void
matrix_names(const struct vg_matrix *mx, struct vg_strv *out)
{
	size_t i, j;

	for (i = 0; i < mx->naxes; i++)
		vg_strv_push(out, mx->axes[i].name);
	for (i = 0; i < mx->ninclude; i++)
		for (j = 0; j < mx->include[i].n; j++)
			vg_strv_push(out, mx->include[i].v[j].key);
}

/* What check_template may judge: names need their source decoded. */
#define TMPL_ENV	0x01	/* env refs are allowed here */
#define TMPL_MATRIX_OK	0x02	/* the matrix decoded: judge matrix.X */
#define TMPL_ENV_OK	0x04	/* env decoded: judge env.X */
#define TMPL_SHELL	0x08	/* a string command: judge the places */

/*
 * Reports the '${{' of segment g of s that has no '}}', with a hint at
 * the opening one (here: the place is that '${{', not the string's).
 */
static void
unterminated(const char *s, const struct vg_sub_seg *g, int here,
    const char *what, const struct vg_loc *at, struct vg_diag *d)
{
	const char *open = s + g->at, *brace = strchr(open + 3, '}');
	const char *nl = strchr(open, '\n');
	char where[64];

	if (here)
		snprintf(where, sizeof(where), "opened here");
	else
		snprintf(where, sizeof(where), "at character %zu of the "
		    "string", g->at + 1);
	if (brace != NULL && (nl == NULL || brace < nl) && here)
		vg_diag_add(d, at, "%s in %s\nhint: the '${{' %s is closed "
		    "by a single '}' at column %d; write '}}'", g->why, what,
		    where, at->col + (int)(brace - open));
	else if (brace != NULL)
		vg_diag_add(d, at, "%s in %s\nhint: the '${{' %s is closed "
		    "by a single '}'; write '}}'", g->why, what, where);
	else
		vg_diag_add(d, at, "%s in %s\nhint: the '${{' %s needs "
		    "'}}' after its expression", g->why, what, where);
}

/* Reports a ${{ }} (segment g of s) where no quoting is sure. */
static void
unsafe_place(const char *s, const struct vg_sub_seg *g, const char *what,
    const struct vg_loc *at, struct vg_diag *d)
{
	struct vg_buf var = VG_BUF_INIT;
	size_t i;
	char c;

	if (g->kind == VG_SUB_INDEX) {
		vg_buf_adds(&var, "VIGIL_TASK_INDEX");
	} else {
		if (g->kind == VG_SUB_MATRIX)
			vg_buf_adds(&var, "VIGIL_MATRIX_");
		for (i = 0; i < g->len; i++) {
			c = s[g->off + i];
			vg_buf_addc(&var, g->kind == VG_SUB_ENV ? c :
			    isalnum((unsigned char)c) ?
			    (char)toupper((unsigned char)c) : '_');
		}
	}
	vg_diag_add(d, at, "'${{ }}' %s in %s: its value could run as a "
	    "command there; use \"$%s\" instead", g->ctx_why, what,
	    vg_buf_str(&var));
	vg_buf_release(&var);
}

/* Reports an undefined ${{ matrix.NAME }} at at. */
static void
undefined_matrix(const struct vg_manifest *m, const char *nm,
    const char *what, const struct vg_loc *at, struct vg_strv *names,
    struct vg_diag *d)
{
	const char *near;

	if (names->n == 0)
		matrix_names(&m->matrix, names);
	near = names->n ? vg_did_you_mean(nm, (const char *const *)names->v,
	    names->n) : NULL;
	if (near != NULL)
		vg_diag_add(d, at, "undefined 'matrix.%s' in %s; did you mean "
		    "'matrix.%s'?", nm, what, near);
	else if (m->matrix.naxes == 0 && m->matrix.ninclude == 0)
		vg_diag_add(d, at, "undefined 'matrix.%s' in %s (there is no "
		    "matrix)", nm, what);
	else
		vg_diag_add(d, at, "undefined 'matrix.%s' in %s (not a matrix "
		    "axis or include key)", nm, what);
}

/* Reports an undefined ${{ env.NAME }} at at. */
static void
undefined_env(const struct vg_manifest *m, const char *nm, const char *what,
    const struct vg_loc *at, struct vg_diag *d)
{
	const char **keys = vg_xcalloc(m->env.n + 1, sizeof(*keys));
	const char *near;
	size_t k;

	for (k = 0; k < m->env.n; k++)
		keys[k] = m->env.v[k].key;
	near = vg_did_you_mean(nm, keys, m->env.n);
	if (near != NULL)
		vg_diag_add(d, at, "undefined 'env.%s' in %s; did you mean "
		    "'env.%s'?", nm, what, near);
	else
		vg_diag_add(d, at, "undefined 'env.%s' in %s (not set in "
		    "'env')", nm, what);
	free(keys);
}

/*
 * Checks every ${{ }} of template s, written at loc; n is its node when
 * known.  Each problem is reported at its '${{' when s is a plain
 * one-line scalar, else at the scalar.  flags: TMPL_*.  Returns the
 * number of problems.
 */
static int
check_template(const struct vg_manifest *m, const char *s,
    const struct vg_ynode *n, const struct vg_loc *loc, unsigned flags,
    const char *what, struct vg_diag *d)
{
	struct vg_sub_seg *segs = NULL;
	struct vg_strv names = VG_STRV_INIT;
	const char *why;
	size_t nseg = 0, bad, i, before = d->lines.n;
	struct vg_loc at;
	char *nm;

	if (n != NULL && (n->kind != VG_Y_SCALAR || (!n->one_line &&
	    n->block_col == 0)))
		n = NULL;
	(void)vg_sub_split(s, &segs, &nseg, &bad, &why);
	if (flags & TMPL_SHELL)
		vg_sub_shell(s, segs, nseg);
	for (i = 0; i < nseg; i++) {
		at = *loc;
		if (n != NULL)
			vg_ynode_loc_at(n, segs[i].at, loc->file, &at);
		nm = vg_xstrndup(s + segs[i].off, segs[i].len);
		if (segs[i].kind != VG_SUB_TEXT && segs[i].kind != VG_SUB_BAD &&
		    segs[i].ctx == VG_SHCTX_UNSAFE)
			unsafe_place(s, &segs[i], what, &at, d);
		switch (segs[i].kind) {
		case VG_SUB_BAD:
			if (strstr(segs[i].why, "unterminated") != NULL)
				unterminated(s, &segs[i], n != NULL, what, &at,
				    d);
			else
				vg_diag_add(d, &at, "%s in %s", segs[i].why,
				    what);
			break;
		case VG_SUB_MATRIX:
			if ((flags & TMPL_MATRIX_OK) &&
			    !matrix_has(&m->matrix, nm, segs[i].len))
				undefined_matrix(m, nm, what, &at, &names, d);
			break;
		case VG_SUB_ENV:
			if (!(flags & TMPL_ENV))
				vg_diag_add(d, &at, "'env.%s' cannot be used "
				    "in %s", nm, what);
			else if ((flags & TMPL_ENV_OK) &&
			    vg_kvs_get(&m->env, nm) == NULL)
				undefined_env(m, nm, what, &at, d);
			break;
		default:
			break;
		}
		free(nm);
	}
	vg_strv_release(&names);
	free(segs);
	return (int)(d->lines.n - before);
}

/* Checks exclude entries name axes and their values. */
static void
check_excludes(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_matrix *mx = &m->matrix;
	const struct vg_matrix_axis *ax;
	struct vg_strv names = VG_STRV_INIT;
	struct vg_buf vals = VG_BUF_INIT;
	const struct vg_kv *kv;
	const char *near;
	size_t i, j, a, v;

	for (i = 0; i < mx->naxes; i++)
		vg_strv_push(&names, mx->axes[i].name);
	for (i = 0; i < mx->nexclude; i++) {
		for (j = 0; j < mx->exclude[i].n; j++) {
			kv = &mx->exclude[i].v[j];
			for (a = 0; a < mx->naxes; a++)
				if (strcmp(mx->axes[a].name, kv->key) == 0)
					break;
			if (a == mx->naxes) {
				near = names.n ? vg_did_you_mean(kv->key,
				    (const char *const *)names.v, names.n) :
				    NULL;
				if (near != NULL)
					vg_diag_add(d, &kv->loc, "exclude "
					    "names unknown matrix axis '%s'; "
					    "did you mean '%s'?", kv->key,
					    near);
				else
					vg_diag_add(d, &kv->loc, "exclude "
					    "names unknown matrix axis '%s'",
					    kv->key);
				continue;
			}
			ax = &mx->axes[a];
			for (v = 0; v < ax->values.n; v++)
				if (strcmp(ax->values.v[v], kv->value) == 0)
					break;
			if (v < ax->values.n)
				continue;
			vg_buf_reset(&vals);
			for (v = 0; v < ax->values.n; v++)
				vg_buf_printf(&vals, "%s%s", v ? ", " : "",
				    ax->values.v[v]);
			vg_diag_add(d, &kv->loc, "exclude value '%s' is not a "
			    "value of matrix axis '%s' (%s)", kv->value,
			    kv->key, vg_buf_str(&vals));
		}
	}
	vg_strv_release(&names);
	vg_buf_release(&vals);
}

/* True when a problem was found at key (or inside it) in some layer. */
static int
tainted(const struct vg_mload *ls, const char *key)
{
	size_t i, len = strlen(key);
	const char *p;

	for (i = 0; i < ls->bad.n; i++) {
		p = ls->bad.v[i];
		if (strncmp(p, key, len) == 0 && (p[len] == '\0' ||
		    p[len] == '.' || p[len] == '['))
			return 1;
	}
	return 0;
}

/* The layer node of the value at loc (a key of mapping key), or NULL. */
static const struct vg_ynode *
layer_value(const struct vg_mload *ls, const char *key, const char *sub,
    const struct vg_loc *loc)
{
	const struct vg_ynode *n;
	size_t i;

	for (i = 0; i < ls->nlayers; i++) {
		if (ls->layers[i].tree == NULL ||
		    ls->layers[i].file != loc->file)
			continue;
		n = vg_ynode_get(vg_ynode_get(ls->layers[i].tree->root, key),
		    sub);
		if (n != NULL && n->line == loc->line && n->col == loc->col)
			return n;
	}
	return NULL;
}

/* The ${{ }} checks of command and env; returns the problems found. */
static int
check_templates(struct vg_mload *ls, unsigned flags, struct vg_diag *d)
{
	const struct vg_manifest *m = ls->m;
	const struct vg_ynode *n, *cmd = ls->cmd_node;
	struct vg_loc loc;
	char what[300];
	size_t i;
	int bad = 0;

	if (!m->command.is_argv && m->command.shell != NULL)
		bad += check_template(m, m->command.shell, cmd,
		    &m->command.loc, flags | TMPL_ENV | TMPL_SHELL,
		    "'command'", d);
	for (i = 0; m->command.is_argv && i < m->command.argv.n; i++) {
		n = cmd != NULL && cmd->kind == VG_Y_SEQ && i < cmd->n ?
		    cmd->items[i] : NULL;
		loc = m->command.loc;
		if (n != NULL)
			loc = (struct vg_loc){ ls->cmd_file, n->line, n->col };
		snprintf(what, sizeof(what), "'command[%zu]'", i);
		bad += check_template(m, m->command.argv.v[i], n, &loc,
		    flags | TMPL_ENV, what, d);
	}
	for (i = 0; i < m->env.n; i++) {
		snprintf(what, sizeof(what), "'env.%.200s'", m->env.v[i].key);
		n = strstr(m->env.v[i].value, "${{") == NULL ? NULL :
		    layer_value(ls, "env", m->env.v[i].key, &m->env.v[i].loc);
		bad += check_template(m, m->env.v[i].value, n,
		    &m->env.v[i].loc, flags & ~TMPL_ENV, what, d);
	}
	return bad;
}

/* True when plugin p's own checks have clean input: its sections and the
 * shared keys plugins read decoded, and an image is there if needed. */
static int
plugin_ready(const struct vg_mload *ls, const struct vg_plugin *p)
{
	static const char *const shared[] = { "image", "workdir", "policy",
		NULL };
	const struct vg_msection *const *s;
	size_t i;

	if (p == NULL || p->validate == NULL)
		return 0;
	for (i = 0; shared[i] != NULL; i++)
		if (tainted(ls, shared[i]))
			return 0;
	for (s = p->sections; s != NULL && *s != NULL; s++)
		if (tainted(ls, (*s)->key))
			return 0;
	return !(p->flags & VG_PLUGIN_IMAGE) || ls->m->image != NULL;
}

void
vg_mload_finish(struct vg_mload *ls, struct vg_diag *d)
{
	struct vg_manifest *m = ls->m;
	const struct vg_plugin *be, *sc;
	const struct vg_ynode *n;
	struct vg_loc loc;
	const char *file = m->file;
	unsigned flags = 0;
	int matrix_ok = !tainted(ls, "matrix"), env_ok = !tainted(ls, "env");
	int cmd_ok = !tainted(ls, "command"), bad = 0;

	if (ls->session) {
		/* A session's commands come from vigil exec --session. */
		if (ls->cmd_seen && vg_manifest_loc(m, "command", &loc) == 0)
			vg_diag_add(d, &loc, "a session has no 'command' (its "
			    "commands come from 'vigil exec --session')");
		if (m->matrix.naxes > 0 &&
		    vg_manifest_loc(m, "matrix", &loc) == 0)
			vg_diag_add(d, &loc, "a session has no 'matrix' (it "
			    "is one sandbox)");
	} else if (m->command.shell == NULL && !m->command.is_argv &&
	    !ls->cmd_seen && !ls->bad_root && cmd_ok) {
		vg_manifest_loc(m, "command", &loc);
		vg_diag_add(d, &loc, "missing required key 'command'");
	}
	be = vg_plugin_find(VG_PLUGIN_BACKEND, m->backend);
	if (m->image == NULL && be != NULL && (be->flags & VG_PLUGIN_IMAGE) &&
	    !tainted(ls, "image")) {
		n = layer_find(ls, "backend", &file);
		report(d, file, n, 0, "backend '%s' needs an 'image'",
		    m->backend);
	}
	if (matrix_ok && m->matrix.nexclude > 0 && m->matrix.naxes == 0) {
		loc = m->matrix.exclude[0].v[0].loc;
		vg_diag_add(d, &loc, "'matrix.exclude' needs matrix axes to "
		    "exclude from");
		bad++;
	}
	if (matrix_ok)
		check_excludes(m, d);
	/* Substitutions judge only names whose source decoded. */
	flags = (matrix_ok ? TMPL_MATRIX_OK : 0) | (env_ok ? TMPL_ENV_OK : 0);
	if (cmd_ok || env_ok)
		bad += check_templates(ls, flags, d);
	/* Expansion needs every value it combines to be valid. */
	if (matrix_ok && env_ok && cmd_ok && bad == 0 && !ls->bad_root &&
	    (m->command.shell != NULL || m->command.is_argv))
		vg_expand_check(m, d);
	check_network(m, be, ls->session, d);
	if (plugin_ready(ls, be))
		be->validate(m, d);
	sc = vg_plugin_find(VG_PLUGIN_SCHEDULER, m->scheduler);
	if (plugin_ready(ls, sc))
		sc->validate(m, d);
}

/* ---- where keys were written ---- */

/* The last place recorded for the first len bytes of path (in file
 * when it is not NULL), or NULL. */
static const struct vg_mloc *
mloc_find(const struct vg_manifest *m, const char *path, size_t len,
    const char *file)
{
	const struct vg_mloc *l;
	size_t i;

	for (i = m->locs.n; i-- > 0;) {
		l = &m->locs.v[i];
		if (strlen(l->path) == len &&
		    strncmp(l->path, path, len) == 0 &&
		    (file == NULL || l->key.file == file))
			return l;
	}
	return NULL;
}

int
vg_manifest_loc(const struct vg_manifest *m, const char *path,
    struct vg_loc *loc)
{
	const struct vg_mloc *l, *root = mloc_find(m, "", 0, NULL);
	const char *file = root != NULL ? root->key.file : NULL;
	size_t len = strlen(path);

	if ((l = mloc_find(m, path, len, NULL)) != NULL) {
		*loc = l->key;
		return 0;
	}
	/* Not set: the nearest ancestor's value lacks it, in the manifest
	 * itself when it has one there. */
	while (len > 0) {
		while (len > 0 && path[len - 1] != '.' && path[len - 1] != '[')
			len--;
		if (len > 0)
			len--;
		if ((l = mloc_find(m, path, len, file)) != NULL ||
		    (l = mloc_find(m, path, len, NULL)) != NULL) {
			*loc = l->value;
			return VG_ENOENT;
		}
	}
	*loc = (struct vg_loc){ m->file, 0, 0 };
	return VG_ENOENT;
}

const struct vg_loc *
vg_manifest_locf(const struct vg_manifest *m, struct vg_loc *loc,
    const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	vg_manifest_loc(m, path, loc);
	return loc;
}

/* ---- JSON ---- */

void
vg_manifest_to_json(const struct vg_manifest *m, struct vg_buf *out)
{
	struct vg_json_writer w;
	size_t i;

	vg_json_writer_init(&w, out);
	/* The effective manifest: file first, then every field. */
	vg_json_obj_begin(&w);
	vg_json_key(&w, "file");
	vg_json_str(&w, m->file);
	vg_json_key(&w, "manifest");
	vg_schema_encode(vg_manifest_schema(), m, &w);
	vg_json_key(&w, "sources");
	vg_json_arr_begin(&w);
	for (i = 0; i < m->sources.n; i++)
		vg_json_str(&w, m->sources.v[i]);
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
}

int
vg_manifest_from_json(const char *json, size_t len, struct vg_manifest **mp,
    struct vg_err *e)
{
	struct vg_ylimits lim = { .max_bytes = 64 * 1024 * 1024,
	    .max_nodes = 4000000, .no_positions = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_mload ls;
	struct vg_ytree *t = NULL;
	const struct vg_ynode *file, *man, *srcs;
	struct vg_dctx c;
	struct vg_manifest *m = NULL;
	size_t i;
	int rc;

	*mp = NULL;
	/* JSON is YAML (flow style), so the same tree and schema read it. */
	if ((rc = vg_ytree_parse("manifest.json", json, len, &lim, &t, NULL,
	    &d)) != 0)
		goto fail;
	file = vg_ynode_get(t->root, "file");
	man = vg_ynode_get(t->root, "manifest");
	srcs = vg_ynode_get(t->root, "sources");
	if (file == NULL || file->kind != VG_Y_SCALAR || man == NULL ||
	    man->kind != VG_Y_MAP) {
		vg_diag_add(&d, NULL, "not an effective manifest record");
		rc = VG_EPARSE;
		goto fail;
	}
	m = vg_manifest_new();
	m->file = vg_xstrdup(file->str);
	for (i = 0; srcs != NULL && srcs->kind == VG_Y_SEQ && i < srcs->n;
	    i++)
		if (srcs->items[i]->kind == VG_Y_SCALAR)
			vg_manifest_source(m, srcs->items[i]->str);
	memset(&ls, 0, sizeof(ls));
	ls.m = m;
	memset(&c, 0, sizeof(c));
	c.d = &d;
	c.file = vg_manifest_source(m, m->file);
	c.raw = 1;
	c.user = &ls;
	vg_schema_decode(vg_manifest_schema(), man, m, &c);
	if (c.errors > 0 || d.lines.n > 0) {
		rc = VG_EPARSE;
		goto fail;
	}
	vg_ytree_free(t);
	vg_diag_release(&d);
	*mp = m;
	return 0;
fail:
	vg_err_set(e, rc, "bad effective manifest: %s", d.lines.n ?
	    d.lines.v[0] : "unknown error");
	vg_manifest_free(m);
	vg_ytree_free(t);
	vg_diag_release(&d);
	return rc;
}

void
vg_resources_key(const struct vg_resources *r, struct vg_buf *out)
{
	struct vg_json_writer w;

	vg_json_writer_init(&w, out);
	vg_schema_encode(&vg_resources_section, r, &w);
}

void
vg_manifest_task_writable(const struct vg_manifest *m, struct vg_strv *out)
{
	char *dest, *cut;
	size_t i;

	for (i = 0; i < m->isolation.writable.n; i++)
		if (m->isolation.writable.v[i][0] == '/')
			vg_strv_push(out, m->isolation.writable.v[i]);
	if (m->outputs.dest == NULL || m->outputs.dest[0] != '/')
		return;
	dest = vg_xstrdup(m->outputs.dest);
	if ((cut = strstr(dest, "${{")) != NULL) {
		*cut = '\0';
		if ((cut = strrchr(dest, '/')) != NULL && cut != dest)
			*cut = '\0';
	}
	vg_strv_push(out, dest);
	free(dest);
}

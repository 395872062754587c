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
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "runner/manifest/manifest-int.h"

#define OFF(type, member)	offsetof(struct type, member)
#define BIG			18446744073709551615.0	/* open range */
#define YEAR			31536000.0

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

/* Decodes one axis: a non-empty list of distinct scalars. */
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
	if (n->kind != VG_Y_SEQ) {
		vg_dctx_error(c, n, "matrix axis '%s' must be a list of "
		    "values, not %s", k->str,
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

/* ---- field checks ---- */

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

/* backend: "apptainer" is another name of singularity. */
static void
check_backend(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	char **s = p;

	(void)f;
	(void)n;
	(void)c;
	if (*s != NULL && strcmp(*s, "apptainer") == 0) {
		free(*s);
		*s = vg_xstrdup("singularity");
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

/*
 * Mount specs "src[:dst[:ro|rw]]" with an absolute dst; dst_required makes
 * the ":dst" part mandatory (docker volumes) instead of optional
 * (apptainer binds).
 */
static void
check_mounts(const struct vg_ynode *n, const struct vg_strv *sv,
    struct vg_dctx *c, int dst_required)
{
	const char *v, *dst, *mode;
	size_t i;

	for (i = 0; i < sv->n; i++) {
		v = sv->v[i];
		dst = strchr(v, ':');
		mode = dst ? strchr(dst + 1, ':') : NULL;
		if (*v == '\0' || dst == v || (dst == NULL && dst_required) ||
		    (dst != NULL && dst[1] != '/') ||
		    (mode != NULL && strcmp(mode, ":ro") != 0 &&
		    strcmp(mode, ":rw") != 0))
			vg_dctx_error(c, n->items[i], "'%s[%zu]' must look "
			    "like %sSOURCE:/DEST or SOURCE:/DEST:ro, not '%s'",
			    c->path, i, dst_required ? "" : "SOURCE, ", v);
	}
}

/* docker.volumes: "src:dst[:ro|rw]". */
static void
check_volumes(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	check_mounts(n, p, c, 1);
}

/* singularity.binds: "src[:dst[:ro|rw]]". */
static void
check_binds(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	check_mounts(n, p, c, 0);
}

/* Offset of the first control character (a byte below 0x20, or 0x7f) in
 * a scalar's text, or -1 when there is none. */
static long
control_at(const struct vg_ynode *n)
{
	size_t i;

	for (i = 0; i < n->len; i++)
		if ((unsigned char)n->str[i] < 0x20 || n->str[i] == 0x7f)
			return (long)i;
	return -1;
}

/* Slurm names (partition, account, ...) and slurm.exclude: no control
 * characters, which would break the batch script's #SBATCH lines and
 * the command lines they are passed on. */
static void
check_printable(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_ynode *el;
	long at;
	size_t i;

	(void)p;
	if (f->type == VG_F_STR) {
		if (n->kind == VG_Y_SCALAR && (at = control_at(n)) >= 0)
			vg_dctx_error(c, n, "'%s' holds a control character "
			    "(byte 0x%02x at offset %ld): only printable "
			    "characters are valid", c->path,
			    (unsigned char)n->str[at], at);
		return;
	}
	for (i = 0; n->kind == VG_Y_SEQ && i < n->n; i++) {
		el = n->items[i];
		if (el->kind == VG_Y_SCALAR && (at = control_at(el)) >= 0)
			vg_dctx_error(c, el, "'%s[%zu]' holds a control "
			    "character (byte 0x%02x at offset %ld): only "
			    "printable characters are valid", c->path, i,
			    (unsigned char)el->str[at], at);
	}
}

/* A rule needs something to match. */
static void
check_rule(const struct vg_section *s, const struct vg_ynode *n, void *base,
    struct vg_dctx *c)
{
	const struct vg_rule *r = base;

	(void)s;
	if (r->match == NULL && r->category == NULL)
		vg_dctx_error(c, n, "'%s' needs 'match' (a glob on the "
		    "command) or 'category'", c->path);
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

/* slurm: polling bounds in order. */
static void
check_slurm(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_slurm_conf *sl = base;

	(void)s;
	if (sl->poll_min > 0 && sl->poll_max > 0 &&
	    sl->poll_min > sl->poll_max)
		vg_dctx_error(c, n, "'slurm.poll_min' (%gs) is larger than "
		    "'slurm.poll_max' (%gs)", sl->poll_min, sl->poll_max);
}

/* ---- tables ---- */

static const char *const sched_names[] = { "direct", "slurm", NULL };
static const int sched_values[] = { VG_SCHED_DIRECT, VG_SCHED_SLURM };
static const char *const backend_names[] = { "local", "docker", "ssh",
	"singularity", "apptainer", "modal", "daytona", "vercel", NULL };
static const char *const retry_on_names[] = { "failed", "timeout", "oom",
	"node_fail", "preempted", "lost", NULL };
static const int retry_on_values[] = { VG_RETRY_FAILED, VG_RETRY_TIMEOUT,
	VG_RETRY_OOM, VG_RETRY_NODE_FAIL, VG_RETRY_PREEMPTED, VG_RETRY_LOST };
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
static const char *const ptrace_names[] = { "children", "deny", NULL };
static const char *const pull_names[] = { "missing", "always", "never",
	NULL };
static const char *const host_key_names[] = { "strict", "accept-new",
	NULL };
static const char *const interface_names[] = { "auto", "lib", "cli", NULL };
static const char *const clock_names[] = { "atime", "mtime", "ctime", "any",
	"all", NULL };

#define STR(st, k, m, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), .help = h }
#define SLURMSTR(st, k, m, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), \
	  .check = check_printable, .help = h }
#define STRDEF(st, k, m, d, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), .def = d, .help = h }
#define CHOICE(st, k, m, d, v, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), .def = d, \
	  .values = v, .help = h }
#define INT(st, k, m, d, lo, hi, h) \
	{ .key = k, .type = VG_F_INT, .off = OFF(st, m), .def = d, \
	  .min = lo, .max = hi, .help = h }
#define U64(st, k, m, lo, hi, h) \
	{ .key = k, .type = VG_F_U64, .off = OFF(st, m), .min = lo, \
	  .max = hi, .help = h }
#define BOOL(st, k, m, d, h) \
	{ .key = k, .type = VG_F_BOOL, .off = OFF(st, m), .def = d, .help = h }
#define FLOAT(st, k, m, d, lo, hi, h) \
	{ .key = k, .type = VG_F_FLOAT, .off = OFF(st, m), .def = d, \
	  .min = lo, .max = hi, .help = h }
#define BYTES(st, k, m, lo, hi, h) \
	{ .key = k, .type = VG_F_BYTES, .off = OFF(st, m), .min = lo, \
	  .max = hi, .help = h }
#define DUR(st, k, m, d, lo, hi, h) \
	{ .key = k, .type = VG_F_DUR, .off = OFF(st, m), .def = d, \
	  .min = lo, .max = hi, .help = h }
#define DURS(st, k, m, lo, hi, h) \
	{ .key = k, .type = VG_F_DUR_U64, .off = OFF(st, m), .min = lo, \
	  .max = hi, .help = h }
#define ENUM(st, k, m, d, v, iv, h) \
	{ .key = k, .type = VG_F_ENUM, .off = OFF(st, m), .def = d, \
	  .values = v, .ivalues = iv, .help = h }
#define STRV(st, k, m, h) \
	{ .key = k, .type = VG_F_STRV, .off = OFF(st, m), .help = h }
#define SECTION(st, k, m, sub_, h) \
	{ .key = k, .type = VG_F_SECTION, .off = OFF(st, m), .sub = sub_, \
	  .help = h }

static const struct vg_section resources_section = {
	.name = "resources",
	.fields = (const struct vg_field[]){
		INT(vg_resources, "cpus", cpus, NULL, 1, 1048576,
		    "CPUs per task"),
		BYTES(vg_resources, "memory", memory, 1, BIG,
		    "memory per task"),
		INT(vg_resources, "gpus", gpus, NULL, 0, 4096,
		    "GPUs per task"),
		DURS(vg_resources, "time", time, 1, 100 * YEAR,
		    "time limit (Slurm --time)"),
		SLURMSTR(vg_resources, "partition", partition,
		    "Slurm partition"),
		SLURMSTR(vg_resources, "account", account, "Slurm account"),
		SLURMSTR(vg_resources, "qos", qos, "Slurm QOS"),
		SLURMSTR(vg_resources, "constraint", constraint,
		    "Slurm node features"),
		{ .key = NULL },
	},
};

static const struct vg_section retry_section = {
	.name = "retry",
	.check = check_retry,
	.fields = (const struct vg_field[]){
		INT(vg_retry, "max", max, "0", 0, 100,
		    "extra attempts after the first"),
		{ .key = "on", .type = VG_F_FLAGS, .off = OFF(vg_retry, on),
		  .def = "failed,timeout,oom,node_fail,preempted,lost",
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
		{ .key = NULL },
	},
};

static const struct vg_section policy_section = {
	.name = "policy",
	.fields = (const struct vg_field[]){
		CHOICE(vg_policy_conf, "mode", mode, NULL, mode_names,
		    "what to do with commands no rule decides"),
		STR(vg_policy_conf, "file", file, "site policy file"),
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
		BOOL(vg_isolation_conf, "network", network, "false",
		    "strict: allow network beyond loopback"),
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

static const struct vg_section docker_section = {
	.name = "docker",
	.fields = (const struct vg_field[]){
		STR(vg_docker_conf, "host", host, "DOCKER_HOST override"),
		{ .key = "volumes", .type = VG_F_STRV,
		  .off = OFF(vg_docker_conf, volumes), .check = check_volumes,
		  .help = "SOURCE:/DEST[:ro] mounts" },
		STRDEF(vg_docker_conf, "network", network, "none",
		    "container network"),
		BOOL(vg_docker_conf, "read_only", read_only, "false",
		    "read-only root file system"),
		STR(vg_docker_conf, "user", user, "user inside"),
		STRV(vg_docker_conf, "cap_add", cap_add, "capabilities"),
		STRV(vg_docker_conf, "devices", devices, "devices"),
		BOOL(vg_docker_conf, "privileged", privileged, "false",
		    "privileged container"),
		STR(vg_docker_conf, "pid_mode", pid_mode, "PID namespace"),
		STR(vg_docker_conf, "ipc_mode", ipc_mode, "IPC namespace"),
		CHOICE(vg_docker_conf, "pull", pull, "missing", pull_names,
		    "when to pull the image"),
		U64(vg_docker_conf, "pids_limit", pids_limit, 1, BIG,
		    "process limit"),
		{ .key = NULL },
	},
};

static const struct vg_section ssh_section = {
	.name = "ssh",
	.fields = (const struct vg_field[]){
		STR(vg_ssh_conf, "host", host, "remote host"),
		INT(vg_ssh_conf, "port", port, "22", 1, 65535, "port"),
		STR(vg_ssh_conf, "user", user, "remote user"),
		STR(vg_ssh_conf, "identity", identity, "private key file"),
		STR(vg_ssh_conf, "known_hosts", known_hosts,
		    "known_hosts file"),
		CHOICE(vg_ssh_conf, "host_key", host_key, "strict",
		    host_key_names, "host key checking"),
		STR(vg_ssh_conf, "proxy_jump", proxy_jump, "jump host"),
		INT(vg_ssh_conf, "keepalive", keepalive, "15", 0, 3600,
		    "keepalive interval, seconds"),
		INT(vg_ssh_conf, "connect_timeout", connect_timeout, "10", 1,
		    3600, "connect timeout, seconds"),
		STRDEF(vg_ssh_conf, "remote_dir", remote_dir, "~/.vigil/runs",
		    "run directories on the host"),
		STRV(vg_ssh_conf, "stage_in", stage_in,
		    "local paths copied before the task"),
		STRV(vg_ssh_conf, "stage_out", stage_out,
		    "remote paths copied back after it"),
		{ .key = NULL },
	},
};

static const struct vg_section singularity_section = {
	.name = "singularity",
	.fields = (const struct vg_field[]){
		STR(vg_singularity_conf, "binary", binary,
		    "apptainer or singularity program"),
		BOOL(vg_singularity_conf, "containall", containall, "true",
		    "--containall"),
		BOOL(vg_singularity_conf, "no_home", no_home, "true",
		    "--no-home"),
		BOOL(vg_singularity_conf, "cleanenv", cleanenv, "true",
		    "--cleanenv"),
		BOOL(vg_singularity_conf, "writable_tmpfs", writable_tmpfs,
		    "false", "--writable-tmpfs"),
		{ .key = "binds", .type = VG_F_STRV,
		  .off = OFF(vg_singularity_conf, binds), .check = check_binds,
		  .help = "SOURCE[:/DEST[:ro]] binds" },
		STRDEF(vg_singularity_conf, "scratch_mount", scratch_mount,
		    "/scratch", "where scratch appears inside"),
		STR(vg_singularity_conf, "pwd", pwd, "--pwd"),
		STRV(vg_singularity_conf, "flags", flags, "extra flags"),
		{ .key = NULL },
	},
};

static const struct vg_section slurm_section = {
	.name = "slurm",
	.check = check_slurm,
	.fields = (const struct vg_field[]){
		CHOICE(vg_slurm_conf, "interface", interface, "auto",
		    interface_names, "libslurm or the commands"),
		INT(vg_slurm_conf, "array_parallelism", array_parallelism,
		    "0", 0, 1000000, "array throttle (%N)"),
		STRDEF(vg_slurm_conf, "signal", signal, "B:USR2@90",
		    "--signal; empty for none"),
		BOOL(vg_slurm_conf, "requeue", requeue, "false", "--requeue"),
		{ .key = "exclude", .type = VG_F_STRV,
		  .off = OFF(vg_slurm_conf, exclude), .check = check_printable,
		  .help = "nodes to avoid" },
		DUR(vg_slurm_conf, "poll_min", poll_min, NULL, 0, 3600,
		    "shortest poll interval"),
		DUR(vg_slurm_conf, "poll_max", poll_max, NULL, 0, 3600,
		    "longest poll interval"),
		{ .key = NULL },
	},
};

static const struct vg_section purge_section = {
	.name = "purge",
	.fields = (const struct vg_field[]){
		STR(vg_purge_conf, "preset", preset, "site purge preset"),
		DURS(vg_purge_conf, "age", age, 1, 100 * YEAR,
		    "files older than this are purged"),
		CHOICE(vg_purge_conf, "clock", clock, NULL, clock_names,
		    "which timestamp the purge looks at"),
		DURS(vg_purge_conf, "margin", margin, 1, 100 * YEAR,
		    "safety margin"),
		{ .key = NULL },
	},
};

static const struct vg_section cache_section = {
	.name = "cache",
	.fields = (const struct vg_field[]){
		STR(vg_cache_conf, "dir", dir, "cache directory"),
		BYTES(vg_cache_conf, "quota_bytes", quota_bytes, 0, BIG,
		    "size quota"),
		U64(vg_cache_conf, "quota_entries", quota_entries, 0, BIG,
		    "entry quota"),
		SECTION(vg_cache_conf, "purge", purge, &purge_section,
		    "site purge policy"),
		DUR(vg_cache_conf, "lock_lease", lock_lease, NULL, 0, 86400,
		    "lock lease"),
		DUR(vg_cache_conf, "lock_wait", lock_wait, NULL, 0, 86400,
		    "how long to wait for a lock"),
		{ .key = NULL },
	},
};

static const struct vg_section cloud_section = {
	.name = "cloud",
	.fields = (const struct vg_field[]){
		STR(vg_cloud_conf, "endpoint", endpoint, "API base URL"),
		STR(vg_cloud_conf, "token_env", token_env,
		    "environment variable holding the API token"),
		STR(vg_cloud_conf, "snapshot", snapshot, "image or snapshot"),
		STR(vg_cloud_conf, "region", region, "region"),
		BOOL(vg_cloud_conf, "keep", keep, "false",
		    "keep the sandbox after the task"),
		{ .key = NULL },
	},
};

const struct vg_section vg_manifest_section = {
	.name = "",
	.fields = (const struct vg_field[]){
		{ .key = "version", .type = VG_F_INT,
		  .off = OFF(vg_manifest, version), .def = "1",
		  .check = check_version, .help = "manifest format; 1" },
		{ .key = "name", .type = VG_F_STR,
		  .off = OFF(vg_manifest, name), .flags = VG_FF_NOCONFIG,
		  .help = "run name" },
		ENUM(vg_manifest, "scheduler", scheduler, "direct",
		    sched_names, sched_values, "direct or slurm"),
		{ .key = "backend", .type = VG_F_STR,
		  .off = OFF(vg_manifest, backend), .def = "local",
		  .values = backend_names, .check = check_backend,
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
		    &resources_section, "what each task needs"),
		DUR(vg_manifest, "timeout", timeout, NULL, 0, 100 * YEAR,
		    "wall-clock limit per attempt"),
		DUR(vg_manifest, "kill_grace", kill_grace, "10", 0, 3600,
		    "SIGTERM to SIGKILL delay"),
		SECTION(vg_manifest, "retry", retry, &retry_section,
		    "retries"),
		SECTION(vg_manifest, "policy", policy, &policy_section,
		    "policy gate"),
		SECTION(vg_manifest, "scratch", scratch, &scratch_section,
		    "per-task scratch"),
		STRV(vg_manifest, "outputs", outputs,
		    "globs kept after the task"),
		STR(vg_manifest, "workdir", workdir, "working directory"),
		SECTION(vg_manifest, "isolation", isolation,
		    &isolation_section, "kernel confinement"),
		SECTION(vg_manifest, "limits", limits, &limits_section,
		    "rlimits"),
		SECTION(vg_manifest, "docker", docker, &docker_section,
		    "docker backend"),
		SECTION(vg_manifest, "ssh", ssh, &ssh_section, "ssh backend"),
		{ .key = "singularity", .alias = "apptainer",
		  .type = VG_F_SECTION, .off = OFF(vg_manifest, singularity),
		  .sub = &singularity_section,
		  .help = "singularity/apptainer backend" },
		SECTION(vg_manifest, "slurm", slurm, &slurm_section,
		    "slurm scheduler"),
		SECTION(vg_manifest, "cache", cache, &cache_section,
		    "SIF cache"),
		SECTION(vg_manifest, "modal", modal, &cloud_section, "Modal"),
		SECTION(vg_manifest, "daytona", daytona, &cloud_section,
		    "Daytona"),
		SECTION(vg_manifest, "vercel", vercel, &cloud_section,
		    "Vercel sandbox"),
		{ .key = NULL },
	},
};

/* ---- life cycle ---- */

struct vg_manifest *
vg_manifest_new(void)
{
	struct vg_manifest *m = vg_xcalloc(1, sizeof(*m));

	vg_schema_defaults(&vg_manifest_section, m);
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
	if (m == NULL)
		return;
	vg_schema_release(&vg_manifest_section, m);
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

/*
 * Checks the ${{ }} references of template s (written at node n of file,
 * or at loc when n is NULL); env refs are allowed when allow_env.
 */
static void
check_template(const struct vg_manifest *m, const char *s,
    const struct vg_ynode *n, const struct vg_loc *loc, int allow_env,
    const char *what, struct vg_diag *d)
{
	struct vg_sub_seg *segs = NULL;
	struct vg_strv names = VG_STRV_INIT;
	const char *why, *near, *name;
	size_t nseg = 0, bad, i, k;
	struct vg_loc at;
	char *nm;

	if (vg_sub_split(s, &segs, &nseg, &bad, &why) != 0) {
		if (n != NULL)
			report(d, loc->file, n, bad, "%s in %s", why, what);
		else
			vg_diag_add(d, loc, "%s in %s", why, what);
		return;
	}
	for (i = 0; i < nseg; i++) {
		name = s + segs[i].off;
		at = *loc;
		if (n != NULL)
			vg_ynode_loc_at(n, segs[i].at, loc->file, &at);
		switch (segs[i].kind) {
		case VG_SUB_MATRIX:
			if (matrix_has(&m->matrix, name, segs[i].len))
				break;
			nm = vg_xstrndup(name, segs[i].len);
			if (names.n == 0)
				matrix_names(&m->matrix, &names);
			near = names.n ? vg_did_you_mean(nm,
			    (const char *const *)names.v, names.n) : NULL;
			if (near != NULL)
				vg_diag_add(d, &at, "undefined 'matrix.%s' in "
				    "%s; did you mean 'matrix.%s'?", nm, what,
				    near);
			else if (m->matrix.naxes == 0 &&
			    m->matrix.ninclude == 0)
				vg_diag_add(d, &at, "undefined 'matrix.%s' in "
				    "%s (there is no matrix)", nm, what);
			else
				vg_diag_add(d, &at, "undefined 'matrix.%s' in "
				    "%s (not a matrix axis or include key)",
				    nm, what);
			free(nm);
			break;
		case VG_SUB_ENV:
			nm = vg_xstrndup(name, segs[i].len);
			if (!allow_env) {
				vg_diag_add(d, &at, "'env.%s' cannot be used "
				    "in %s", nm, what);
			} else if (vg_kvs_get(&m->env, nm) == NULL) {
				const char **keys = vg_xcalloc(m->env.n + 1,
				    sizeof(*keys));

				for (k = 0; k < m->env.n; k++)
					keys[k] = m->env.v[k].key;
				near = vg_did_you_mean(nm, keys, m->env.n);
				if (near != NULL)
					vg_diag_add(d, &at, "undefined "
					    "'env.%s' in %s; did you mean "
					    "'env.%s'?", nm, what, near);
				else
					vg_diag_add(d, &at, "undefined "
					    "'env.%s' in %s (not set in "
					    "'env')", nm, what);
				free(keys);
			}
			free(nm);
			break;
		default:
			break;
		}
	}
	vg_strv_release(&names);
	free(segs);
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

void
vg_mload_finish(struct vg_mload *ls, int templates, struct vg_diag *d)
{
	struct vg_manifest *m = ls->m;
	const struct vg_backend_ops *ops;
	const struct vg_ynode *n;
	struct vg_loc loc;
	const char *file = m->file;
	size_t i, before = d->lines.n;
	char what[300];

	if (m->command.shell == NULL && !m->command.is_argv &&
	    !ls->cmd_seen && !ls->bad_root) {
		loc = (struct vg_loc){ m->file, 0, 0 };
		vg_diag_add(d, &loc, "missing required key 'command'");
	}
	if (m->image == NULL && (strcmp(m->backend, "docker") == 0 ||
	    strcmp(m->backend, "singularity") == 0)) {
		n = layer_find(ls, "backend", &file);
		report(d, file, n, 0, "backend '%s' needs an 'image'",
		    m->backend);
	}
	if (m->matrix.nexclude > 0 && m->matrix.naxes == 0) {
		loc = m->matrix.exclude[0].v[0].loc;
		vg_diag_add(d, &loc, "'matrix.exclude' needs matrix axes to "
		    "exclude from");
	}
	check_excludes(m, d);
	/* Templates and expansion depend on the values just checked. */
	if (d->lines.n > before || !templates)
		return;
	if (!m->command.is_argv && m->command.shell != NULL) {
		n = ls->cmd_node != NULL && ls->cmd_node->kind == VG_Y_SCALAR ?
		    ls->cmd_node : NULL;
		check_template(m, m->command.shell, n, &m->command.loc, 1,
		    "'command'", d);
	}
	for (i = 0; m->command.is_argv && i < m->command.argv.n; i++) {
		n = ls->cmd_node != NULL && ls->cmd_node->kind == VG_Y_SEQ &&
		    i < ls->cmd_node->n ? ls->cmd_node->items[i] : NULL;
		loc = m->command.loc;
		if (n != NULL)
			loc = (struct vg_loc){ ls->cmd_file, n->line, n->col };
		snprintf(what, sizeof(what), "'command[%zu]'", i);
		check_template(m, m->command.argv.v[i], NULL, &loc, 1, what,
		    d);
	}
	for (i = 0; i < m->env.n; i++) {
		snprintf(what, sizeof(what), "'env.%.200s'", m->env.v[i].key);
		check_template(m, m->env.v[i].value, NULL, &m->env.v[i].loc,
		    0, what, d);
	}
	if (d->lines.n > before)
		return;
	if (vg_expand_check(m, d) > 0)
		return;
	ops = vg_backend_find(m->backend);
	if (ops != NULL && ops->validate != NULL)
		ops->validate(m, d);
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
	vg_schema_encode(&vg_manifest_section, m, &w);
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
	struct vg_diag d = { VG_STRV_INIT };
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
	vg_schema_decode(&vg_manifest_section, man, m, &c);
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

/*
 * gridengine-submit.c - what vigil hands to qsub: the job script and
 * qsub's argv.
 *
 * Safety argument: qsub runs without a shell, every request one argv
 * element, and with -C '' so that no line of the script is read as a
 * directive (qsub otherwise takes "#$" lines as options, and a value
 * with a newline could start one).  The script uses no manifest value:
 * the run directory and the vigil path are single-quoted
 * (vg_buf_shquote) after a check that they hold no control character,
 * the attempt and the indexes are integers.  The task's command, env
 * and matrix never enter it: task-exec reads them from the run
 * directory.  Values qsub parses itself (lists split at ',', "host:path"
 * output paths, $VARIABLES in paths) are refused or not used: the job
 * output goes to /dev/null when the run directory's path has one of
 * ",:$" in it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/gridengine.h"
#include "schedulers/cluster.h"

#define VALUE_MAX	1024

const char *const vg_ge_allowed_options[] = {
	"A", "P", "R", "ar", "binding", "ckpt", "dl", "js", "l", "notify",
	"now", "p", "q", "r", NULL
};

/* Options without a value (true/false/"" in the manifest). */
static int
is_flag(const char *key)
{
	return strcmp(key, "notify") == 0;
}

/* Options whose value is y or n. */
static int
is_yes_no(const char *key)
{
	return strcmp(key, "R") == 0 || strcmp(key, "r") == 0 ||
	    strcmp(key, "now") == 0;
}

/* Refuses a value that is not one printable word of at most VALUE_MAX
 * bytes (qsub splits nothing itself, but a value starting with '-'
 * would read as an option) and, in what, names the first byte of bad. */
static int
word_check(const char *v, const char *bad, char *why, size_t n)
{
	const unsigned char *p = (const unsigned char *)v;

	if (strlen(v) > VALUE_MAX) {
		snprintf(why, n, "longer than %d bytes", VALUE_MAX);
		return -1;
	}
	if (*p == '-') {
		snprintf(why, n, "starts with '-'");
		return -1;
	}
	for (; *p != '\0'; p++)
		if (*p <= 0x20 || *p == 0x7f || strchr(bad, *p) != NULL) {
			snprintf(why, n, "byte 0x%02x at %zu is not allowed "
			    "(one word of printable text)", *p,
			    (size_t)(p - (const unsigned char *)v));
			return -1;
		}
	return 0;
}

int
vg_ge_option_check(const char *key, const char *value, char *why, size_t n)
{
	size_t i;

	for (i = 0; vg_ge_allowed_options[i] != NULL; i++)
		if (strcmp(key, vg_ge_allowed_options[i]) == 0)
			break;
	if (vg_ge_allowed_options[i] == NULL) {
		snprintf(why, n, "not an allowed qsub option (allowed: -A -P "
		    "-R -ar -binding -ckpt -dl -js -l -notify -now -p -q -r; "
		    "vigil sets the others itself)");
		return -1;
	}
	if (is_flag(key)) {
		if (*value != '\0' && strcmp(value, "true") != 0 &&
		    strcmp(value, "false") != 0) {
			snprintf(why, n, "a flag: give true, false or ''");
			return -1;
		}
		return 0;
	}
	if (is_yes_no(key)) {
		if (strcmp(value, "y") != 0 && strcmp(value, "n") != 0 &&
		    strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
			snprintf(why, n, "give y or n");
			return -1;
		}
		return 0;
	}
	if (*value == '\0') {
		snprintf(why, n, "needs a value");
		return -1;
	}
	return word_check(value, "", why, n);
}

/* Refuses a path the script cannot carry (a control character). */
static int
path_check(const char *field, const char *v, struct vg_err *e)
{
	const unsigned char *p;

	if (v == NULL || *v != '/')
		return vg_err_set(e, VG_EINVAL, "gridengine: the %s must be "
		    "an absolute path ('%s')", field, v != NULL ? v : "");
	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return vg_err_set(e, VG_EINVAL, "gridengine: the %s "
			    "has a control character (0x%02x at byte %zu)",
			    field, *p, (size_t)(p - (const unsigned char *)v));
	return 0;
}

/* Whether the indexes of j are consecutive. */
static int
contiguous(const struct vg_ge_job *j)
{
	size_t i;

	for (i = 1; i < j->n; i++)
		if (j->index[i] != j->index[0] + (int)i)
			return 0;
	return 1;
}

int
vg_ge_script(const struct vg_ge_job *j, struct vg_buf *out,
    struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;
	int r;

	if ((r = path_check("run directory", j->run_dir, e)) != 0 ||
	    (r = path_check("vigil path", j->vigil, e)) != 0)
		return r;
	if (j->n == 0)
		return vg_err_set(e, VG_EINVAL, "gridengine: empty array");
	vg_buf_printf(&b, "#!/bin/sh\nVIGIL_ATTEMPT=%d\nexport VIGIL_ATTEMPT\n",
	    j->attempt > 0 ? j->attempt : 1);
	if (!contiguous(j)) {
		/* $1 becomes the index of task $SGE_TASK_ID. */
		vg_buf_adds(&b, "set --");
		for (i = 0; i < j->n; i++)
			vg_buf_printf(&b, "%s%d", i % 16 == 15 ? " \\\n" : " ",
			    j->index[i]);
		vg_buf_adds(&b, "\nshift $((SGE_TASK_ID - 1))\n");
	}
	vg_task_exec_line(&b, j->vigil, j->manifest_sha256, j->run_dir);
	if (!contiguous(j))
		vg_buf_adds(&b, " \"$1\"\n");
	else if (j->index[0] == 1)
		vg_buf_adds(&b, " \"$SGE_TASK_ID\"\n");
	else
		vg_buf_printf(&b, " \"$((SGE_TASK_ID %c %d))\"\n",
		    j->index[0] < 1 ? '-' : '+', abs(j->index[0] - 1));
	vg_buf_add(out, b.data, b.len);
	vg_buf_release(&b);
	return 0;
}

/* Megabytes of bytes, rounded up. */
static unsigned long long
mib(uint64_t bytes)
{
	return (unsigned long long)((bytes + (1 << 20) - 1) >> 20);
}

/* Pushes "-OPT VALUE" after checking VALUE is one word (field names it). */
static int
push_word(struct vg_strv *out, const char *opt, const char *field,
    const char *v, struct vg_err *e)
{
	char why[128];

	if (v == NULL || *v == '\0')
		return 0;
	if (word_check(v, ",", why, sizeof why) != 0)
		return vg_err_set(e, VG_EINVAL, "%s: '%s': %s", field, v, why);
	vg_strv_push(out, opt);
	vg_strv_push(out, v);
	return 0;
}

/* Pushes gridengine.options. */
static int
push_options(const struct vg_ge_conf *c, struct vg_strv *out,
    struct vg_err *e)
{
	const struct vg_kv *kv;
	char why[256];
	size_t i;

	for (i = 0; c != NULL && i < c->options.n; i++) {
		kv = &c->options.v[i];
		if (vg_ge_option_check(kv->key, kv->value, why, sizeof why) !=
		    0)
			return vg_err_set(e, VG_EINVAL, "gridengine.options.%s: "
			    "%s", kv->key, why);
		if (is_flag(kv->key)) {
			if (strcmp(kv->value, "false") != 0)
				vg_strv_pushf(out, "-%s", kv->key);
			continue;
		}
		vg_strv_pushf(out, "-%s", kv->key);
		vg_strv_push(out, kv->value);
	}
	return 0;
}

int
vg_ge_qsub_argv(const struct vg_ge_job *j, const char *script_path,
    const char *out_dir, struct vg_strv *out, struct vg_err *e)
{
	const struct vg_ge_conf *c = j->conf;
	const char *mem;
	char why[128];
	size_t i, nmem;
	int r, slots = j->cpus > 1 ? j->cpus : 1;

	vg_strv_push(out, "qsub");
	vg_strv_push(out, "-terse");
	vg_strv_push(out, "-C");
	vg_strv_push(out, "");
	vg_strv_push(out, "-N");
	vg_strv_pushf(out, VG_GE_NAME_PREFIX "%s", j->name);
	vg_strv_push(out, "-t");
	vg_strv_pushf(out, "1-%zu", j->n);
	vg_strv_push(out, "-S");
	vg_strv_push(out, "/bin/sh");
	vg_strv_push(out, "-j");
	vg_strv_push(out, "y");
	vg_strv_push(out, "-o");
	vg_strv_push(out, out_dir != NULL && strpbrk(out_dir, ",:$") == NULL ?
	    out_dir : "/dev/null");
	if (j->cpus > 1) {
		if (c == NULL || c->pe == NULL || *c->pe == '\0')
			return vg_err_set(e, VG_EINVAL, "gridengine: resources."
			    "cpus is %d but gridengine.pe names no parallel "
			    "environment (ask the cell's admins: qconf -spl "
			    "lists them; e.g. gridengine.pe: smp)", j->cpus);
		if (word_check(c->pe, ",", why, sizeof why) != 0)
			return vg_err_set(e, VG_EINVAL, "gridengine.pe: '%s': "
			    "%s", c->pe, why);
		vg_strv_push(out, "-pe");
		vg_strv_push(out, c->pe);
		vg_strv_pushf(out, "%d", j->cpus);
	}
	/* Grid Engine multiplies per-slot requests by the slots. */
	nmem = c != NULL && c->memory.n > 0 ? c->memory.n : 1;
	for (i = 0; j->memory > 0 && i < nmem; i++) {
		mem = c != NULL && c->memory.n > 0 ? c->memory.v[i] : "h_vmem";
		if (word_check(mem, ",=", why, sizeof why) != 0)
			return vg_err_set(e, VG_EINVAL, "gridengine.memory: "
			    "'%s': %s", mem, why);
		vg_strv_push(out, "-l");
		vg_strv_pushf(out, "%s=%lluM", mem,
		    mib((j->memory + (uint64_t)slots - 1) / (uint64_t)slots));
	}
	if (j->time > 0) {
		vg_strv_push(out, "-l");
		vg_strv_pushf(out, "h_rt=%llu", (unsigned long long)j->time);
	}
	if (j->gpus > 0) {
		if (c == NULL || c->gpu_complex == NULL ||
		    *c->gpu_complex == '\0')
			return vg_err_set(e, VG_EINVAL, "gridengine: resources."
			    "gpus is %d but gridengine.gpu_complex names no "
			    "consumable (qconf -sc lists them; e.g. "
			    "gridengine.gpu_complex: gpu)", j->gpus);
		if (word_check(c->gpu_complex, ",=", why, sizeof why) != 0)
			return vg_err_set(e, VG_EINVAL, "gridengine.gpu_complex:"
			    " '%s': %s", c->gpu_complex, why);
		vg_strv_push(out, "-l");
		/* per slot, like memory */
		vg_strv_pushf(out, "%s=%d", c->gpu_complex,
		    (j->gpus + slots - 1) / slots);
	}
	if ((r = push_word(out, "-q", "resources.partition", j->queue, e)) !=
	    0 || (r = push_word(out, "-A", "resources.account", j->account,
	    e)) != 0 || (r = push_word(out, "-P", "resources.qos",
	    j->project, e)) != 0)
		return r;
	if (j->hold != NULL && *j->hold != '\0') {
		if (strspn(j->hold, "0123456789,") != strlen(j->hold))
			return vg_err_set(e, VG_EINVAL, "gridengine: bad hold "
			    "list '%s'", j->hold);
		vg_strv_push(out, "-hold_jid");
		vg_strv_push(out, j->hold);
	}
	if ((r = push_options(c, out, e)) != 0)
		return r;
	vg_strv_push(out, script_path);
	return 0;
}

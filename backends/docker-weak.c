/*
 * docker-weak.c - weak definitions of the attempt helpers declared in
 * backend.h (vg_attempt_env, vg_attempt_argv) and of vg_diag_add from
 * manifest.h, following their documented contracts.  The definitions in
 * backend.c and manifest.c are strong and take precedence whenever they
 * are linked; these keep the docker backend linkable and testable on its
 * own.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "backend.h"

/* Base environment, task env, then the VIGIL_* variables. */
__attribute__((weak)) void
vg_attempt_env(const struct vg_attempt *a, struct vg_strv *out)
{
	static const char *const base[] = {
		"PATH", "HOME", "LANG", "USER", "TMPDIR",
	};
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if ((v = getenv(base[i])) != NULL)
			vg_strv_pushf(out, "%s=%s", base[i], v);
	if (a->task != NULL)
		for (i = 0; i < a->task->env.n; i++)
			vg_strv_pushf(out, "%s=%s", a->task->env.v[i].key,
			    a->task->env.v[i].value);
	vg_strv_pushf(out, "VIGIL_RUN_ID=%s", a->run_id ? a->run_id : "");
	vg_strv_pushf(out, "VIGIL_TASK_INDEX=%d",
	    a->task != NULL ? a->task->index : 0);
	vg_strv_pushf(out, "VIGIL_TASK_DIR=%s", a->task_dir ? a->task_dir : "");
	vg_strv_pushf(out, "VIGIL_ATTEMPT=%d", a->attempt);
}

/* ["/bin/sh", "-c", cmd] for a string command, the list otherwise. */
__attribute__((weak)) void
vg_attempt_argv(const struct vg_attempt *a, struct vg_strv *out)
{
	const struct vg_command *c = a->task != NULL ? &a->task->command :
	    &a->m->command;
	size_t i;

	if (c->is_argv) {
		for (i = 0; i < c->argv.n; i++)
			vg_strv_push(out, c->argv.v[i]);
		return;
	}
	vg_strv_push(out, "/bin/sh");
	vg_strv_push(out, "-c");
	vg_strv_push(out, c->shell != NULL ? c->shell : "");
}

/* Adds "FILE:LINE:COL: message" (or "FILE: message") to d. */
__attribute__((weak)) void
vg_diag_add(struct vg_diag *d, const struct vg_loc *loc, const char *fmt,
    ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	if (loc != NULL && loc->file != NULL && loc->line > 0)
		vg_buf_printf(&b, "%s:%d:%d: ", loc->file, loc->line, loc->col);
	else if (loc != NULL && loc->file != NULL)
		vg_buf_printf(&b, "%s: ", loc->file);
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_strv_take(&d->lines, vg_buf_detach(&b));
}

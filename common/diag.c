/*
 * diag.c - lists of located problems (common/diag.h).  Formatting only:
 * what a problem is and where it sits is the caller's business.
 */
#include <stdarg.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/diag.h"

/* Diagnostics beyond this many are summarised in one line. */
#define DIAG_MAX 100

void
vg_diag_add(struct vg_diag *d, const struct vg_loc *loc, const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	if (d == NULL)
		return;
	if (d->lines.n > DIAG_MAX)
		return;
	if (d->lines.n == DIAG_MAX) {
		vg_strv_pushf(&d->lines, "too many problems; stopping after "
		    "%d", DIAG_MAX);
		return;
	}
	if (loc != NULL && loc->file != NULL) {
		if (loc->line > 0)
			vg_buf_printf(&b, "%s:%d:%d: ", loc->file, loc->line,
			    loc->col);
		else
			vg_buf_printf(&b, "%s: ", loc->file);
	}
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_strv_take(&d->lines, vg_buf_detach(&b));
}

void
vg_diag_release(struct vg_diag *d)
{
	if (d != NULL)
		vg_strv_release(&d->lines);
}

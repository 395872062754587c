/*
 * report.h - the morning report of a run: everything recorded about it
 * (header, every attempt on a timeline lane, the task table with usage,
 * failures with the tail of their stderr, resource totals, the policy's
 * decisions) as one JSON document, and the same document inside one
 * self-contained HTML page (inline CSS, JS and SVG; nothing fetched).
 * The document's layout is in docs/report.md; report.c gathers it,
 * report-html.c wraps it in the page (runner/core/report/report.html).
 */
#ifndef VG_REPORT_H
#define VG_REPORT_H

#include "common/buf.h"
#include "common/err.h"
#include "runner/core/store.h"

/* Format of vg_report_write's document (the "vigil_report" member). */
#define VG_REPORT_VERSION	1

/* Failures whose stderr tail the report carries (the rest are counted). */
#define VG_REPORT_MAX_TAILS	200
/* Bytes of each stderr tail. */
#define VG_REPORT_TAIL		2048
/* Policy decisions listed one by one (the rest are counted). */
#define VG_REPORT_MAX_DECISIONS	1000

/*
 * Appends the report of run id (an id, a unique prefix or "last") to
 * out: the JSON document, or with html the HTML page around it.  A run
 * in progress gives a snapshot (the document says so).  Errors as
 * vg_store_run_get.
 */
int	vg_report_write(struct vg_store *st, const char *id, int html,
	    struct vg_buf *out, struct vg_err *e);

/* Wraps the JSON document json (len bytes) in the report page. */
void	vg_report_html(const char *json, size_t len, const char *title,
	    struct vg_buf *out);

#endif

/*
 * diag.c - lists of located problems (common/diag.h).  Formatting only:
 * what a problem is and where it sits is the caller's business.  The
 * excerpts follow gcc and clang: the line under a gutter with its
 * number, then a caret under the column.  Columns count characters, as
 * libyaml's marks do; a tab moves to the next multiple of 8.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/diag.h"

/* Diagnostics beyond this many are summarised in one line. */
#define DIAG_MAX 100

/* Columns of an excerpt's text (80 less the gutter "12345 | "), and how
 * many of them a long line keeps before its caret. */
#define EXCERPT_WIDTH	72
#define EXCERPT_BEFORE	40
#define TAB_STOP	8

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
vg_diag_source(struct vg_diag *d, const char *name, const char *text,
    size_t len)
{
	size_t i;

	if (d == NULL || name == NULL || text == NULL)
		return;
	for (i = 0; i < d->src_names.n; i++)
		if (strcmp(d->src_names.v[i], name) == 0)
			return;
	vg_strv_push(&d->src_names, name);
	vg_strv_take(&d->src_texts, vg_xstrndup(text, len));
}

/*
 * The kept source that line s is placed in: its index, with *line and
 * *col read from "NAME:LINE:COL: " and *msg after it; -1 when none.
 */
static long
find_source(const struct vg_diag *d, const char *s, long *line, long *col,
    const char **msg)
{
	size_t i, len, best = 0;
	long pick = -1;
	char *end;

	for (i = 0; i < d->src_names.n; i++) {
		len = strlen(d->src_names.v[i]);
		if (len > best && strncmp(s, d->src_names.v[i], len) == 0 &&
		    s[len] == ':' && isdigit((unsigned char)s[len + 1])) {
			best = len;
			pick = (long)i;
		}
	}
	if (pick < 0)
		return -1;
	*line = strtol(s + best + 1, &end, 10);
	if (*end != ':' || !isdigit((unsigned char)end[1]))
		return -1;
	*col = strtol(end + 1, &end, 10);
	if (end[0] != ':' || end[1] != ' ' || *line <= 0)
		return -1;
	*msg = end + 2;
	return pick;
}

/*
 * Appends line (len bytes) to out as it shows on a terminal, behind the
 * gutter of line number num, and a caret line under column col (1-based,
 * in characters; past the end: after the last one).  Tabs become spaces,
 * control characters '?'; a line wider than EXCERPT_WIDTH is cut around
 * the caret, each cut end marked "...".
 */
static void
excerpt(struct vg_buf *out, long num, const char *line, size_t len,
    long col)
{
	struct vg_buf text = VG_BUF_INIT;
	const char *p = line, *end = line + len;
	size_t *cell = NULL, ncell = 0, cap = 0, first, last, avail, caret;
	long chars = 0;

	caret = SIZE_MAX;
	while (p < end) {
		if (++chars == col)
			caret = ncell;
		do {
			cell = vg_xgrow(cell, &cap, ncell + 1, sizeof(*cell));
			cell[ncell++] = text.len;
			if (*p == '\t')
				vg_buf_addc(&text, ' ');
			else if ((unsigned char)*p < 0x20 || *p == 0x7f)
				vg_buf_addc(&text, '?');
			else
				break;
		} while (*p == '\t' && ncell % TAB_STOP != 0);
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			p++;
			continue;
		}
		do
			vg_buf_addc(&text, *p++);
		while (p < end && ((unsigned char)*p & 0xc0) == 0x80);
	}
	if (caret == SIZE_MAX)
		caret = ncell;
	first = caret > EXCERPT_BEFORE ? caret - EXCERPT_BEFORE : 0;
	avail = EXCERPT_WIDTH - (first > 0 ? 3 : 0);
	last = ncell - first > avail ? first + avail - 3 : ncell;
	if (ncell <= EXCERPT_WIDTH) {
		first = 0;
		last = ncell;
	}
	vg_buf_printf(out, "%5ld | %s", num, first > 0 ? "..." : "");
	if (first < ncell)
		vg_buf_add(out, vg_buf_str(&text) + cell[first],
		    (last < ncell ? cell[last] : text.len) - cell[first]);
	vg_buf_printf(out, "%s\n      | %*s^\n", last < ncell ? "..." : "",
	    (int)(caret - first + (first > 0 ? 3 : 0)), "");
	free(cell);
	vg_buf_release(&text);
}

void
vg_diag_render(const struct vg_diag *d, size_t i, struct vg_buf *out)
{
	const char *s = d->lines.v[i], *msg, *text, *bol, *eol, *nl;
	long src, line, col, l;

	src = find_source(d, s, &line, &col, &msg);
	if (src < 0) {
		vg_buf_printf(out, "%s\n", s);
		return;
	}
	nl = strchr(msg, '\n');
	vg_buf_add(out, s, (size_t)(msg - s));
	vg_buf_adds(out, "error: ");
	vg_buf_add(out, msg, nl != NULL ? (size_t)(nl - msg) : strlen(msg));
	vg_buf_addc(out, '\n');
	text = d->src_texts.v[src];
	for (bol = text, l = 1; l < line && bol != NULL; l++)
		if ((bol = strchr(bol, '\n')) != NULL)
			bol++;
	if (bol != NULL && (*bol != '\0' || line == 1)) {
		eol = bol + strcspn(bol, "\n");
		if (eol > bol && eol[-1] == '\r')
			eol--;
		excerpt(out, line, bol, (size_t)(eol - bol), col);
	}
	if (nl != NULL)
		vg_buf_printf(out, "%s\n", nl + 1);
}

void
vg_diag_print(const struct vg_diag *d, FILE *f)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;

	for (i = 0; i < d->lines.n; i++) {
		vg_buf_reset(&b);
		vg_diag_render(d, i, &b);
		fputs(vg_buf_str(&b), f);
	}
	vg_buf_release(&b);
}

void
vg_diag_release(struct vg_diag *d)
{
	if (d == NULL)
		return;
	vg_strv_release(&d->lines);
	vg_strv_release(&d->src_names);
	vg_strv_release(&d->src_texts);
}

/*
 * report-html.c - the report page: runner/core/report/report.html (the
 * page's CSS and JS, kept as a file of their own so that they are edited
 * as what they are) embedded at build time as vg_report_asset by
 * scripts/embed.sh (mk/report.mk), with the run's JSON document put in
 * place of its data marker.  The page fetches nothing: no network, no
 * fonts, every picture inline SVG drawn by its script from the data.
 */
#include <string.h>

#include "common/json.h"
#include "runner/core/report.h"

/* The page (generated from runner/core/report/report.html). */
extern const char vg_report_asset[];
extern const unsigned long vg_report_asset_len;

/* Where the data goes, and where the title goes. */
#define DATA_MARK	"/*@VIGIL_DATA@*/"
#define TITLE_MARK	"@VIGIL_TITLE@"

/* Appends s escaped for HTML text. */
static void
html_text(struct vg_buf *out, const char *s)
{
	for (; *s != '\0'; s++)
		switch (*s) {
		case '<':
			vg_buf_adds(out, "&lt;");
			break;
		case '>':
			vg_buf_adds(out, "&gt;");
			break;
		case '&':
			vg_buf_adds(out, "&amp;");
			break;
		default:
			vg_buf_addc(out, *s);
		}
}

/* Appends JSON text so that it cannot end the script element it is in:
 * every "</" becomes "<\/" (the same string to a JSON parser). */
static void
script_safe(struct vg_buf *out, const char *json, size_t len)
{
	const char *p = json, *end = json + len, *q;

	while ((q = memchr(p, '<', (size_t)(end - p))) != NULL) {
		vg_buf_add(out, p, (size_t)(q - p));
		vg_buf_addc(out, '<');
		if (q + 1 < end && q[1] == '/')
			vg_buf_addc(out, '\\');
		p = q + 1;
	}
	vg_buf_add(out, p, (size_t)(end - p));
}

void
vg_report_html(const char *json, size_t len, const char *title,
    struct vg_buf *out)
{
	const char *page = vg_report_asset, *end = page + vg_report_asset_len;
	const char *p = page, *t, *d;

	t = strstr(p, TITLE_MARK);
	d = strstr(p, DATA_MARK);
	if (t != NULL && d != NULL && t < d) {
		vg_buf_add(out, p, (size_t)(t - p));
		html_text(out, title);
		p = t + strlen(TITLE_MARK);
	}
	if (d == NULL) {
		vg_buf_add(out, p, (size_t)(end - p));
		return;
	}
	vg_buf_add(out, p, (size_t)(d - p));
	script_safe(out, json, len);
	p = d + strlen(DATA_MARK);
	vg_buf_add(out, p, (size_t)(end - p));
}

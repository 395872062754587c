/*
 * fuzz-cloud-logs.c - the cloud providers' stream formats, which come
 * from the network: Daytona's marked command log (fed in pieces whose
 * size the input chooses, so markers split across pieces) and Vercel's
 * ndjson command stream (line splitter, then each line's parser), and
 * the listing of a sandbox's working directory that outputs are chosen
 * from (vg_cloud_ls_line on each line).  The first byte picks the format
 * (bit 0 Daytona's log, else bit 1 the listing), the second the piece
 * size.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cloud.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Counts bytes per stream and checks the stream number. */
static int
count_out(void *arg, int stream, const char *p, size_t n)
{
	size_t *total = arg;

	if (stream != 1 && stream != 2)
		__builtin_trap();
	(void)p;
	total[stream] += n;
	return 0;
}

/* Parses one ndjson line as the vercel backend does. */
static int
one_line(void *arg, const char *line, size_t n)
{
	struct vg_vercel_event ev;
	struct vg_json_doc *doc = NULL;
	struct vg_err e;

	(void)arg;
	vg_err_init(&e);
	if (n > 0 && vg_vercel_event_parse(line, n, &ev, &doc, &e) == 0 &&
	    ev.kind == VG_VERCEL_LOG && ev.len > 0 && ev.data[ev.len] != '\0')
		__builtin_trap();
	vg_json_free(doc);
	return 0;
}

/* Parses one listing line as vg_cloud_outputs does. */
static int
ls_line(void *arg, const char *line, size_t n)
{
	char *s = strndup(line, n), type;
	unsigned long long size;
	const char *rel;

	(void)arg;
	if (s == NULL)
		return 0;
	if (vg_cloud_ls_line(s, &type, &size, &rel) == 0 && (rel < s ||
	    rel >= s + strlen(s) || *rel == '/' || strstr(rel, "//") != NULL))
		__builtin_trap();
	free(s);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 2;
	size_t total[3] = { 0, 0, 0 }, step, i, k;
	struct vg_daytona_demux d;
	struct vg_cloud_lines l;

	if (size < 2)
		return 0;
	step = data[1] ? data[1] : 1;
	size -= 2;
	if (data[0] & 1) {
		vg_daytona_demux_init(&d, count_out, total);
		for (i = 0; i < size; i += k) {
			k = size - i < step ? size - i : step;
			vg_daytona_demux_feed(&d, p + i, k);
		}
		vg_daytona_demux_end(&d);
		if (total[1] + total[2] > size)
			__builtin_trap();
		return 0;
	}
	vg_cloud_lines_init(&l, 4096, data[0] & 2 ? ls_line : one_line,
	    NULL);
	for (i = 0; i < size; i += k) {
		k = size - i < step ? size - i : step;
		if (vg_cloud_lines_feed(&l, p + i, k) != 0)
			break;
	}
	vg_cloud_lines_end(&l);
	vg_cloud_lines_release(&l);
	return 0;
}

/*
 * fuzz-stream.c - the output stream's on-disk readers (runner/core/
 * stream.c): the frame and index record checks on raw bytes, and
 * recovery of a frames file made of the input (with an index of the
 * input's tail), after which every indexed frame must read back, by the
 * reader and through the sorted index.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/core/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

/* Counts payload bytes (a vg_stream_read sink). */
static int
count(void *arg, const void *p, size_t n)
{
	(void)p;
	*(size_t *)arg += n;
	return 0;
}

/* Writes n bytes of p to dir/name, replacing it. */
static void
put(const char *name, const void *p, size_t n)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (n > 0 && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_stream_ent f;
	struct vg_stream_fix fix;
	struct vg_stream_reader r;
	struct vg_err e;
	size_t split, i, got;
	int task;

	if (dir[0] == '\0') {
		char sub[80];

		snprintf(dir, sizeof(dir), "/tmp/vigil-fuzz-stream-XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(sub, sizeof(sub), "%s/stream", dir);
		(void)mkdir(sub, 0700);
	}
	(void)vg_stream_frame_check(data, size, &f);
	if (size >= VG_STREAM_REC)
		(void)vg_stream_rec_get(data, &f);
	/* The input's first byte places the split: frames before it, an
	 * index (maybe lying) after. */
	split = size > 0 ? size - (size_t)data[0] % (size + 1) : 0;
	put("stream/0.frames", data, split);
	put("stream/0.index", data + split, size - split);
	/* Readers of an unrecovered stream fail cleanly or not at all. */
	for (task = 0; task < 2; task++) {
		vg_err_init(&e);
		got = 0;
		if (vg_stream_reader_open(&r, dir, task, VG_STREAM_STDOUT,
		    &e) == 0) {
			(void)vg_stream_read(&r, count, &got, &e);
			vg_stream_reader_close(&r);
		}
	}
	vg_err_init(&e);
	if (vg_stream_recover(dir, &fix, &e) != 0)
		abort();
	vg_stream_cache_drop();	/* rewritten faster than mtime moves */
	/* After recovery every indexed frame checks. */
	for (i = 0; i < 4; i++) {
		vg_err_init(&e);
		got = 0;
		if (vg_stream_reader_open(&r, dir, (int)i % 2, i < 2 ?
		    VG_STREAM_STDOUT : VG_STREAM_STDERR, &e) != 0)
			abort();
		if (vg_stream_read(&r, count, &got, &e) != 0)
			abort();
		vg_stream_reader_close(&r);
		if (vg_stream_task_read(dir, (int)i % 2, i < 2 ?
		    VG_STREAM_STDOUT : VG_STREAM_STDERR, count, &got,
		    &e) != 0)
			abort();
	}
	return 0;
}

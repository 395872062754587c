/*
 * test-stream.c - output: stream (runner/core/stream.c): the CRC-32C, the
 * frame and index codecs and what they refuse, the writer thread framing
 * two attempts' pipes read back per task and stream exactly, recovery
 * cutting a torn tail (a half frame, garbage, a half index record) and
 * skipping a damaged frame in the middle, the reader stopping at a torn
 * index record, the sorted index agreeing with the reader, and the tails
 * that report and notify read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/path.h"
#include "runner/core/stream.h"

/* Collects payloads (a vg_stream_read sink). */
static int
collect(void *arg, const void *p, size_t n)
{
	vg_buf_add(arg, p, n);
	return 0;
}

/* What task's stream holds, read back whole, by the reader and by the
 * sorted index (both must agree). */
static void
read_all(const char *dir, int task, int stream, struct vg_buf *out)
{
	struct vg_stream_reader r;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	vg_buf_reset(out);
	vg_buf_add(out, "", 0);
	assert_int_equal(vg_stream_reader_open(&r, dir, task, stream, &e), 0);
	assert_int_equal(vg_stream_read(&r, collect, out, &e), 0);
	vg_stream_reader_close(&r);
	vg_buf_add(&b, "", 0);
	assert_int_equal(vg_stream_task_read(dir, task, stream, collect, &b,
	    &e), 0);
	assert_int_equal(b.len, out->len);
	assert_memory_equal(b.data, out->data, b.len);
	vg_buf_release(&b);
}

static off_t
size_of(const char *dir, const char *name)
{
	char *p = vg_path_join(dir, name);
	struct stat sb;

	assert_int_equal(stat(p, &sb), 0);
	free(p);
	return sb.st_size;
}

/* Appends n bytes to dir/name. */
static void
append(const char *dir, const char *name, const void *p, size_t n)
{
	char *path = vg_path_join(dir, name);
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
	free(path);
}

/* Writes three attempts' output through the writer into a fresh run
 * directory: task 0 "a1\n" then "a2\n" on stdout and "e0" on stderr, task
 * 1 big bytes on stdout, task 2 "c" on stdout. */
static char *
populate(size_t big)
{
	char tmpl[] = "/tmp/vigil-test-stream-XXXXXX";
	struct vg_stream_writer *w;
	struct vg_stream_src *s0, *s1, *s2;
	struct vg_stream_fix fix;
	struct vg_err e;
	char *dir, *data;
	int f0[2], f1[2], f2[2];
	size_t i;

	vg_err_init(&e);
	assert_non_null(mkdtemp(tmpl));
	dir = vg_xstrdup(tmpl);
	assert_int_equal(vg_stream_writer_open(dir, &w, &fix, &e), 0);
	assert_int_equal(fix.frames, 0);
	assert_int_equal(vg_stream_attach(w, 0, 1, f0, &s0, &e), 0);
	assert_int_equal(vg_stream_attach(w, 1, 2, f1, &s1, &e), 0);
	assert_int_equal(write(f0[0], "a1\n", 3), 3);
	assert_int_equal(write(f0[1], "e0", 2), 2);
	data = vg_xmalloc(big);
	for (i = 0; i < big; i++)
		data[i] = (char)('A' + i % 23);
	/* More than a pipe holds: the writer drains as the task writes. */
	for (i = 0; i < big; ) {
		ssize_t k = write(f1[0], data + i, big - i);

		assert_true(k > 0);
		i += (size_t)k;
	}
	free(data);
	/* Task 1 framed to its end (and task 0's first writes, ready
	 * before): "a2\n" is a frame of its own, the last but one. */
	vg_stream_detach(w, s1);
	assert_int_equal(write(f0[0], "a2\n", 3), 3);
	vg_stream_detach(w, s0);
	assert_int_equal(vg_stream_attach(w, 2, 1, f2, &s2, &e), 0);
	assert_int_equal(write(f2[0], "c", 1), 1);
	vg_stream_detach(w, s2);
	assert_int_equal(vg_stream_writer_close(w, &e), 0);
	return dir;
}

static void
cleanup(char *dir)
{
	char *cmd = vg_xasprintf("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

/* The checksum is CRC-32C (its standard check value). */
static void
test_crc(void **state)
{
	(void)state;
	assert_int_equal(vg_stream_crc(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(vg_stream_crc(vg_stream_crc(0, "1234", 4),
	    "56789", 5), 0xE3069283u);
}

/* A frame checks whole; short is "not yet", any changed byte invalid. */
static void
test_frame_codec(void **state)
{
	unsigned char b[VG_STREAM_HDR + 5];
	struct vg_stream_ent f = { .task = 7, .attempt = 2,
	    .stream = VG_STREAM_STDERR, .len = 5 }, g;
	size_t i;

	(void)state;
	memcpy(b + VG_STREAM_HDR, "hello", 5);
	vg_stream_frame_hdr(b, &f, b + VG_STREAM_HDR);
	assert_int_equal(vg_stream_frame_check(b, sizeof(b), &g),
	    (long)sizeof(b));
	assert_int_equal(g.task, 7);
	assert_int_equal(g.attempt, 2);
	assert_int_equal(g.stream, VG_STREAM_STDERR);
	assert_int_equal(g.len, 5);
	for (i = 0; i < sizeof(b); i++)
		assert_int_equal(vg_stream_frame_check(b, i, &g), 0);
	for (i = 0; i < sizeof(b); i++) {
		/* Invalid, or (a longer length) not whole yet. */
		b[i] ^= 0x10;
		assert_true(vg_stream_frame_check(b, sizeof(b), &g) <= 0);
		b[i] ^= 0x10;
	}
	/* A length beyond the limit is refused before it is believed. */
	b[16] = 1;
	b[17] = 0;
	b[18] = 0x10;	/* VG_STREAM_MAX + 1 */
	b[19] = 0;
	assert_int_equal(vg_stream_frame_check(b, sizeof(b), &g), -1);
}

/* Index records round-trip, offsets above 4 GiB too; a flip fails. */
static void
test_rec_codec(void **state)
{
	unsigned char r[VG_STREAM_REC];
	struct vg_stream_ent f = { .task = 99999, .attempt = 3,
	    .stream = VG_STREAM_STDOUT, .len = 65536,
	    .off = 0x123456789aULL }, g;
	size_t i;

	(void)state;
	vg_stream_rec_put(r, &f);
	assert_int_equal(vg_stream_rec_get(r, &g), 0);
	assert_int_equal(g.task, f.task);
	assert_int_equal(g.attempt, f.attempt);
	assert_int_equal(g.stream, f.stream);
	assert_int_equal(g.len, f.len);
	assert_true(g.off == f.off);
	for (i = 0; i < sizeof(r); i++) {
		r[i] ^= 1;
		assert_int_equal(vg_stream_rec_get(r, &g), -1);
		r[i] ^= 1;
	}
}

/* Each task's stdout and stderr come back apart, whole and in order. */
static void
test_writer_roundtrip(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t big = 300 * 1024, i;
	char *dir;

	(void)state;
	dir = populate(big);
	assert_true(vg_stream_present(dir));
	read_all(dir, 0, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "a1\na2\n");
	read_all(dir, 0, VG_STREAM_STDERR, &b);
	assert_string_equal(vg_buf_str(&b), "e0");
	read_all(dir, 1, VG_STREAM_STDOUT, &b);
	assert_int_equal(b.len, big);
	for (i = 0; i < big; i++)
		if (b.data[i] != (char)('A' + i % 23))
			fail_msg("byte %zu differs", i);
	read_all(dir, 1, VG_STREAM_STDERR, &b);
	assert_int_equal(b.len, 0);
	read_all(dir, 2, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "c");
	read_all(dir, 5, VG_STREAM_STDOUT, &b);
	assert_int_equal(b.len, 0);
	vg_buf_release(&b);
	cleanup(dir);
}

/* Recovery of intact files changes nothing. */
static void
test_recover_clean(void **state)
{
	struct vg_stream_fix fix;
	struct vg_err e;
	off_t fsz, isz;
	char *dir;

	(void)state;
	vg_err_init(&e);
	dir = populate(1000);
	fsz = size_of(dir, "stream/0.frames");
	isz = size_of(dir, "stream/0.index");
	assert_int_equal(vg_stream_recover(dir, &fix, &e), 0);
	assert_int_equal(fix.cut, 0);
	assert_int_equal(fix.damaged, 0);
	assert_int_equal(fix.reindexed, 0);
	assert_int_equal(fix.frames * VG_STREAM_REC, (size_t)isz);
	assert_int_equal(size_of(dir, "stream/0.frames"), fsz);
	cleanup(dir);
}

/* A torn last frame (half a frame, then garbage) and a half index record
 * are cut; everything before reads as it did, and appending goes on. */
static void
test_recover_torn(void **state)
{
	unsigned char half[VG_STREAM_HDR + 10];
	struct vg_stream_ent f = { .task = 0, .attempt = 1,
	    .stream = VG_STREAM_STDOUT, .len = 10 };
	struct vg_stream_writer *w;
	struct vg_stream_src *s;
	struct vg_stream_fix fix;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	off_t fsz, isz;
	char *dir;
	int fd[2];

	(void)state;
	vg_err_init(&e);
	dir = populate(1000);
	fsz = size_of(dir, "stream/0.frames");
	isz = size_of(dir, "stream/0.index");
	memcpy(half + VG_STREAM_HDR, "0123456789", 10);
	vg_stream_frame_hdr(half, &f, half + VG_STREAM_HDR);
	append(dir, "stream/0.frames", half, VG_STREAM_HDR + 4);
	append(dir, "stream/0.index", "\1\2\3", 3);
	/* The reader stops at the torn record and gives what is whole. */
	read_all(dir, 0, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "a1\na2\n");
	assert_int_equal(vg_stream_recover(dir, &fix, &e), 0);
	assert_int_equal(fix.cut, VG_STREAM_HDR + 4);
	assert_int_equal(fix.reindexed, 1);
	assert_int_equal(size_of(dir, "stream/0.frames"), fsz);
	assert_int_equal(size_of(dir, "stream/0.index"), isz);

	/* Garbage after the last frame, and an index record lost. */
	append(dir, "stream/0.frames", "garbage that is no frame", 24);
	{
		char *ip = vg_path_join(dir, "stream/0.index");

		assert_int_equal(truncate(ip, isz - VG_STREAM_REC), 0);
		free(ip);
	}
	assert_int_equal(vg_stream_recover(dir, &fix, &e), 0);
	assert_int_equal(fix.cut, 24);
	assert_int_equal(fix.reindexed, 1);
	assert_int_equal(size_of(dir, "stream/0.index"), isz);
	read_all(dir, 2, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "c");

	/* A resumed writer appends after the cut. */
	assert_int_equal(vg_stream_writer_open(dir, &w, &fix, &e), 0);
	assert_int_equal(vg_stream_attach(w, 0, 2, fd, &s, &e), 0);
	assert_int_equal(write(fd[0], "a3\n", 3), 3);
	vg_stream_detach(w, s);
	assert_int_equal(vg_stream_writer_close(w, &e), 0);
	read_all(dir, 0, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "a1\na2\na3\n");
	assert_int_equal(vg_stream_recover(dir, &fix, &e), 0);
	assert_int_equal(fix.cut, 0);
	assert_int_equal(fix.reindexed, 0);
	vg_buf_release(&b);
	cleanup(dir);
}

/* A damaged frame in the middle is skipped, not a reason to cut what
 * follows; a reader of the old index says which frame does not check. */
static void
test_recover_damaged(void **state)
{
	struct vg_stream_reader r;
	struct vg_stream_fix fix;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	unsigned char c;
	off_t fsz, at;
	char *dir, *fp;
	int fd;

	(void)state;
	vg_err_init(&e);
	dir = populate(10);
	fsz = size_of(dir, "stream/0.frames");
	/* The last two frames: task 0's "a2\n", then task 2's "c". */
	at = fsz - (VG_STREAM_HDR + 1) - (VG_STREAM_HDR + 3);
	fp = vg_path_join(dir, "stream/0.frames");
	fd = open(fp, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, at + VG_STREAM_HDR), 1);
	assert_int_equal(c, 'a');
	c = 'b';
	assert_int_equal(pwrite(fd, &c, 1, at + VG_STREAM_HDR), 1);
	close(fd);
	free(fp);
	vg_buf_add(&b, "", 0);
	assert_int_equal(vg_stream_reader_open(&r, dir, 0, VG_STREAM_STDOUT,
	    &e), 0);
	assert_int_not_equal(vg_stream_read(&r, collect, &b, &e), 0);
	vg_stream_reader_close(&r);
	assert_non_null(strstr(e.msg, "does not check"));
	assert_int_equal(vg_stream_recover(dir, &fix, &e), 0);
	assert_int_equal(fix.cut, 0);
	assert_int_equal(fix.damaged, VG_STREAM_HDR + 3);
	assert_int_equal(fix.reindexed, 1);
	assert_int_equal(size_of(dir, "stream/0.frames"), fsz);
	read_all(dir, 0, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "a1\n");
	read_all(dir, 2, VG_STREAM_STDOUT, &b);
	assert_string_equal(vg_buf_str(&b), "c");
	read_all(dir, 1, VG_STREAM_STDOUT, &b);
	assert_int_equal(b.len, 10);
	vg_buf_release(&b);
	cleanup(dir);
}

/* The tail report and notify show: from the stream, or from the file. */
static void
test_tail(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	char *dir, *td;
	int cut;

	(void)state;
	vg_err_init(&e);
	dir = populate(5000);
	assert_int_equal(vg_task_output_tail(dir, 1, VG_STREAM_STDOUT, 100,
	    &b, &cut, &e), 0);
	assert_int_equal(b.len, 100);
	assert_int_equal(cut, 1);
	assert_int_equal(b.data[99], (char)('A' + 4999 % 23));
	vg_buf_reset(&b);
	assert_int_equal(vg_task_output_tail(dir, 0, VG_STREAM_STDERR, 100,
	    &b, &cut, &e), 0);
	assert_int_equal(cut, 0);
	assert_string_equal(vg_buf_str(&b), "e0");
	cleanup(dir);

	/* Without a stream: the task's file. */
	{
		char tmpl[] = "/tmp/vigil-test-stream-XXXXXX";

		assert_non_null(mkdtemp(tmpl));
		dir = vg_xstrdup(tmpl);
	}
	td = vg_path_join(dir, "tasks");
	assert_int_equal(mkdir(td, 0700), 0);
	free(td);
	td = vg_path_join(dir, "tasks/3");
	assert_int_equal(mkdir(td, 0700), 0);
	free(td);
	{
		char *p = vg_path_join(dir, "tasks/3/stderr");
		FILE *f = fopen(p, "w");

		assert_non_null(f);
		fputs("line one\nline two\n", f);
		fclose(f);
		free(p);
	}
	vg_buf_reset(&b);
	assert_int_equal(vg_task_output_tail(dir, 3, VG_STREAM_STDERR, 9,
	    &b, &cut, &e), 0);
	assert_int_equal(cut, 1);
	assert_string_equal(vg_buf_str(&b), "line two\n");
	vg_buf_reset(&b);
	assert_int_equal(vg_task_output_tail(dir, 4, VG_STREAM_STDERR, 9,
	    &b, &cut, &e), 0);
	assert_int_equal(b.len, 0);
	vg_buf_release(&b);
	cleanup(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc),
		cmocka_unit_test(test_frame_codec),
		cmocka_unit_test(test_rec_codec),
		cmocka_unit_test(test_writer_roundtrip),
		cmocka_unit_test(test_recover_clean),
		cmocka_unit_test(test_recover_torn),
		cmocka_unit_test(test_recover_damaged),
		cmocka_unit_test(test_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

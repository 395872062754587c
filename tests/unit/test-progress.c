/*
 * test-progress.c - what a foreground run shows, read back from a pipe:
 * plain lines per state change and notes, and the hold the driver keeps
 * while its transaction is open (nothing written until the release, in
 * order then, or dropped after a rollback; the bar not redrawn).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/state.h"
#include "runner/core/progress.h"

/* Reads what is in the pipe now (non-blocking) into out. */
static void
drain(int fd, char *out, size_t n)
{
	ssize_t r;
	size_t len = 0;

	while (len + 1 < n && (r = read(fd, out + len, n - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
}

/* A display writing into a pipe whose read end does not block. */
struct pfx {
	int			 p[2];
	int			 counts[VG_ST__COUNT];
	struct vg_progress	*pg;
	char			 buf[4096];
};

/* Opens the pipe and the display of a run R of total tasks in mode. */
static void
pfx_open(struct pfx *f, enum vg_progress_mode mode, size_t total)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(pipe2(f->p, O_CLOEXEC), 0);
	assert_int_equal(fcntl(f->p[0], F_SETFL, O_NONBLOCK), 0);
	f->pg = vg_progress_new(f->p[1], mode, "R", total, f->counts);
}

/* What the display wrote since the last call. */
static const char *
pfx_read(struct pfx *f)
{
	drain(f->p[0], f->buf, sizeof(f->buf));
	return f->buf;
}

/* Frees the display and closes the pipe. */
static void
pfx_close(struct pfx *f)
{
	vg_progress_free(f->pg);
	close(f->p[0]);
	close(f->p[1]);
}

/* Lines and notes are written at once when nothing holds them. */
static void
test_lines_unheld(void **state)
{
	struct pfx f;

	(void)state;
	pfx_open(&f, VG_PROGRESS_LINES, 2);
	vg_progress_task(f.pg, 0, "i=0", VG_ST_RUNNING, 1, -1, 0, NULL);
	vg_progress_task(f.pg, 0, "i=0", VG_ST_SUCCEEDED, 1, 0, 0, NULL);
	vg_progress_note(f.pg, "a note %d", 7);
	assert_string_equal(pfx_read(&f), "vigil: R/0 [i=0] RUNNING\n"
	    "vigil: R/0 [i=0] SUCCEEDED exit 0\n"
	    "vigil: a note 7\n");
	pfx_close(&f);
}

/* Held lines appear only at the release, whole and in order. */
static void
test_hold_release(void **state)
{
	struct pfx f;

	(void)state;
	pfx_open(&f, VG_PROGRESS_LINES, 3);
	vg_progress_hold(f.pg);
	vg_progress_task(f.pg, 1, "i=1", VG_ST_RUNNING, 2, -1, 0, NULL);
	vg_progress_note(f.pg, "held");
	vg_progress_task(f.pg, 1, "i=1", VG_ST_FAILED, 2, 3, 0, "exit 3");
	assert_string_equal(pfx_read(&f), "");
	vg_progress_release(f.pg, 1);
	assert_string_equal(pfx_read(&f),
	    "vigil: R/1 [i=1] RUNNING (attempt 2)\n"
	    "vigil: held\n"
	    "vigil: R/1 [i=1] FAILED (attempt 2) exit 3: exit 3\n");
	/* Released: written at once again; a second release is a no-op. */
	vg_progress_release(f.pg, 1);
	vg_progress_note(f.pg, "after");
	assert_string_equal(pfx_read(&f), "vigil: after\n");
	pfx_close(&f);
}

/* A release without printing (a rolled-back transaction) drops what
 * was held; what follows is written as usual. */
static void
test_hold_drop(void **state)
{
	struct pfx f;

	(void)state;
	pfx_open(&f, VG_PROGRESS_LINES, 1);
	vg_progress_hold(f.pg);
	vg_progress_task(f.pg, 0, "-", VG_ST_SUCCEEDED, 1, 0, 0, NULL);
	vg_progress_release(f.pg, 0);
	assert_string_equal(pfx_read(&f), "");
	vg_progress_hold(f.pg);
	vg_progress_note(f.pg, "kept");
	vg_progress_release(f.pg, 1);
	assert_string_equal(pfx_read(&f), "vigil: kept\n");
	pfx_close(&f);
}

/* The bar is not redrawn while held (tick asks for no wait of its own);
 * the release draws it when due. */
static void
test_hold_bar(void **state)
{
	struct pfx f;

	(void)state;
	pfx_open(&f, VG_PROGRESS_BAR, 4);
	assert_int_equal(vg_progress_tick(f.pg), 250);	/* first draw */
	assert_non_null(strstr(pfx_read(&f), "0/4"));
	f.counts[VG_ST_SUCCEEDED] = 1;
	vg_progress_hold(f.pg);
	usleep(260 * 1000);
	assert_int_equal(vg_progress_tick(f.pg), -1);
	assert_string_equal(pfx_read(&f), "");
	vg_progress_release(f.pg, 1);
	assert_non_null(strstr(pfx_read(&f), "1/4"));
	pfx_close(&f);
}

/* The bar counts cancelled and denied tasks apart from failed ones. */
static void
test_bar_counts(void **state)
{
	struct pfx f;
	const char *line;

	(void)state;
	pfx_open(&f, VG_PROGRESS_BAR, 6);
	f.counts[VG_ST_SUCCEEDED] = 1;
	f.counts[VG_ST_FAILED] = 1;
	f.counts[VG_ST_TIMEOUT] = 1;
	f.counts[VG_ST_CANCELLED] = 2;
	f.counts[VG_ST_DENIED] = 1;
	assert_int_equal(vg_progress_tick(f.pg), 250);
	line = pfx_read(&f);
	assert_non_null(strstr(line, "6/6  ok 1  failed 2  cancelled 2  "
	    "denied 1  "));
	pfx_close(&f);
	/* Only cancelled: no "failed" at all. */
	pfx_open(&f, VG_PROGRESS_BAR, 2);
	f.counts[VG_ST_CANCELLED] = 2;
	assert_int_equal(vg_progress_tick(f.pg), 250);
	line = pfx_read(&f);
	assert_non_null(strstr(line, "2/2  ok 0  cancelled 2  running 0"));
	assert_null(strstr(line, "failed"));
	pfx_close(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_unheld),
		cmocka_unit_test(test_hold_release),
		cmocka_unit_test(test_hold_drop),
		cmocka_unit_test(test_hold_bar),
		cmocka_unit_test(test_bar_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

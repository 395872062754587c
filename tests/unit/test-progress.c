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

/* A pipe with a non-blocking read end. */
static void
open_pipe(int p[2])
{
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
}

/* Lines and notes are written at once when nothing holds them. */
static void
test_lines_unheld(void **state)
{
	int p[2], counts[VG_ST__COUNT] = { 0 };
	struct vg_progress *pg;
	char buf[1024];

	(void)state;
	open_pipe(p);
	pg = vg_progress_new(p[1], VG_PROGRESS_LINES, "R", 2, counts);
	vg_progress_task(pg, 0, "i=0", VG_ST_RUNNING, 1, -1, 0, NULL);
	vg_progress_task(pg, 0, "i=0", VG_ST_SUCCEEDED, 1, 0, 0, NULL);
	vg_progress_note(pg, "a note %d", 7);
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "vigil: R/0 [i=0] RUNNING\n"
	    "vigil: R/0 [i=0] SUCCEEDED exit 0\n"
	    "vigil: a note 7\n");
	vg_progress_free(pg);
	close(p[0]);
	close(p[1]);
}

/* Held lines appear only at the release, whole and in order. */
static void
test_hold_release(void **state)
{
	int p[2], counts[VG_ST__COUNT] = { 0 };
	struct vg_progress *pg;
	char buf[1024];

	(void)state;
	open_pipe(p);
	pg = vg_progress_new(p[1], VG_PROGRESS_LINES, "R", 3, counts);
	vg_progress_hold(pg);
	vg_progress_task(pg, 1, "i=1", VG_ST_RUNNING, 2, -1, 0, NULL);
	vg_progress_note(pg, "held");
	vg_progress_task(pg, 1, "i=1", VG_ST_FAILED, 2, 3, 0, "exit 3");
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "");
	vg_progress_release(pg, 1);
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "vigil: R/1 [i=1] RUNNING (attempt 2)\n"
	    "vigil: held\n"
	    "vigil: R/1 [i=1] FAILED (attempt 2) exit 3: exit 3\n");
	/* Released: written at once again; a second release is a no-op. */
	vg_progress_release(pg, 1);
	vg_progress_note(pg, "after");
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "vigil: after\n");
	vg_progress_free(pg);
	close(p[0]);
	close(p[1]);
}

/* A release without printing (a rolled-back transaction) drops what
 * was held; what follows is written as usual. */
static void
test_hold_drop(void **state)
{
	int p[2], counts[VG_ST__COUNT] = { 0 };
	struct vg_progress *pg;
	char buf[1024];

	(void)state;
	open_pipe(p);
	pg = vg_progress_new(p[1], VG_PROGRESS_LINES, "R", 1, counts);
	vg_progress_hold(pg);
	vg_progress_task(pg, 0, "-", VG_ST_SUCCEEDED, 1, 0, 0, NULL);
	vg_progress_release(pg, 0);
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "");
	vg_progress_hold(pg);
	vg_progress_note(pg, "kept");
	vg_progress_release(pg, 1);
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "vigil: kept\n");
	vg_progress_free(pg);
	close(p[0]);
	close(p[1]);
}

/* The bar is not redrawn while held (tick asks for no wait of its own);
 * the release draws it when due. */
static void
test_hold_bar(void **state)
{
	int p[2], counts[VG_ST__COUNT] = { 0 };
	struct vg_progress *pg;
	char buf[4096];

	(void)state;
	open_pipe(p);
	pg = vg_progress_new(p[1], VG_PROGRESS_BAR, "R", 4, counts);
	assert_int_equal(vg_progress_tick(pg), 250);	/* first draw */
	drain(p[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "0/4"));
	counts[VG_ST_SUCCEEDED] = 1;
	vg_progress_hold(pg);
	usleep(260 * 1000);
	assert_int_equal(vg_progress_tick(pg), -1);
	drain(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "");
	vg_progress_release(pg, 1);
	drain(p[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "1/4"));
	vg_progress_free(pg);
	close(p[0]);
	close(p[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_unheld),
		cmocka_unit_test(test_hold_release),
		cmocka_unit_test(test_hold_drop),
		cmocka_unit_test(test_hold_bar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-slurm-journal.c - the job journal RUN_DIR/slurm/jobs as resume and
 * vigil cancel read it: every well-formed "INDEX ATTEMPT JOB_TASK" line in
 * order, anything else skipped, no journal is no entries, an unreadable
 * one an error naming the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"
#include "schedulers/slurm.h"

static void
test_journal_load(void **state)
{
	char dir[] = "/tmp/vg-journal-XXXXXX", path[128], want[256];
	struct vg_sched_jentry *v;
	struct vg_err e;
	size_t n;
	FILE *f;

	vg_err_init(&e);
	assert_non_null(mkdtemp(dir));
	/* No journal yet: nothing was submitted. */
	assert_int_equal(vg_slurm_journal_load(dir, &v, &n, &e), 0);
	assert_null(v);
	assert_int_equal(n, 0);
	snprintf(path, sizeof path, "%s/slurm", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/slurm/jobs", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0 1 3095_0\n1 1 3095_1\ngarbage\n7 2 3101_3\n"
	    "8 1 3102\n9 1 3102_4", f);
	fclose(f);
	assert_int_equal(vg_slurm_journal_load(dir, &v, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[0].index, 0);
	assert_int_equal(v[0].attempt, 1);
	assert_true(v[0].job == 3095);
	assert_true(v[0].task == 0);
	assert_int_equal(v[2].index, 7);
	assert_int_equal(v[2].attempt, 2);
	assert_true(v[2].job == 3101);
	assert_true(v[2].task == 3);
	/* The last line may lack its newline (a crash mid-append). */
	assert_int_equal(v[3].index, 9);
	assert_true(v[3].task == 4);
	free(v);
	/* A directory where the file should be: an error naming it. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(vg_slurm_journal_load(dir, &v, &n, &e), VG_EDENIED);
	assert_null(v);
	assert_int_equal(n, 0);
	snprintf(want, sizeof want, "reading the job journal '%s/slurm/jobs': "
	    "'slurm/jobs' in '%s/slurm' is not a regular file; refusing it",
	    dir, dir);
	assert_string_equal(e.msg, want);
	assert_int_equal(rmdir(path), 0);
	/* "slurm" a file: not a missing journal, an error. */
	snprintf(path, sizeof path, "%s/slurm", dir);
	assert_int_equal(rmdir(path), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	vg_err_init(&e);
	assert_int_equal(vg_slurm_journal_load(dir, &v, &n, &e), VG_EIO);
	snprintf(want, sizeof want, "reading the job journal '%s/slurm/jobs': "
	    "cannot open 'slurm/jobs' in '%s/slurm': Not a directory", dir,
	    dir);
	assert_string_equal(e.msg, want);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

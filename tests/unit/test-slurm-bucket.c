/*
 * test-slurm-bucket.c - the shared token bucket: refill arithmetic with
 * explicit clocks, corrupt and future-dated files, errors, and four
 * processes drawing from one file at once, which together must stay
 * within burst + rate x elapsed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/path.h"
#include "schedulers/slurm.h"

struct fix {
	char	dir[64];
	char	*path;
};

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof *f);

	snprintf(f->dir, sizeof f->dir, "/tmp/vg-bucket-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->path = vg_path_join(f->dir, "bucket");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;
	struct vg_err e;

	vg_rm_rf(f->dir, &e);
	free(f->path);
	free(f);
	return 0;
}

static void
test_refill(void **state)
{
	struct fix *f = *state;
	struct vg_slurm_bucket b;
	struct vg_err e;
	double w;

	assert_int_equal(vg_slurm_bucket_init(&b, f->path, 1, 3, &e), 0);
	/* A new bucket is full: three at once, then wait one second. */
	assert_int_equal(vg_slurm_bucket_take(&b, 100, &w, &e), 0);
	assert_true(w == 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 100, &w, &e), 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 100, &w, &e), 0);
	assert_true(w == 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 100, &w, &e), 0);
	assert_true(w > 0.999 && w < 1.001);
	/* Half a second later, half a second to go. */
	assert_int_equal(vg_slurm_bucket_take(&b, 100.5, &w, &e), 0);
	assert_true(w > 0.499 && w < 0.501);
	assert_int_equal(vg_slurm_bucket_take(&b, 101, &w, &e), 0);
	assert_true(w == 0);
	/* A long pause refills only up to the burst. */
	assert_int_equal(vg_slurm_bucket_take(&b, 1000, &w, &e), 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 1000, &w, &e), 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 1000, &w, &e), 0);
	assert_true(w == 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 1000, &w, &e), 0);
	assert_true(w > 0.999);
	vg_slurm_bucket_release(&b);
}

static void
test_bad_files(void **state)
{
	struct fix *f = *state;
	struct vg_slurm_bucket b;
	struct vg_err e;
	double w;

	assert_int_equal(vg_slurm_bucket_init(&b, f->path, 2, 1, &e), 0);
	/* Garbage counts as a full bucket. */
	assert_int_equal(vg_write_file_atomic(f->path, "garbage\n", 8, 0600,
	    &e), 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 50, &w, &e), 0);
	assert_true(w == 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 50, &w, &e), 0);
	assert_true(w > 0.499 && w < 0.501);
	/* A stamp from the future (clock reset by a reboot) is reset. */
	assert_int_equal(vg_write_file_atomic(f->path, "0.0 99999.0\n", 12,
	    0600, &e), 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 10, &w, &e), 0);
	assert_true(w == 0);
	vg_slurm_bucket_release(&b);

	assert_int_equal(vg_slurm_bucket_init(&b, f->path, 0, 1, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "slurm rate limit: rate 0/s and burst 1 "
	    "must be > 0 and >= 1");
	assert_int_equal(vg_slurm_bucket_init(&b, "/nonexistent/dir/bucket",
	    1, 1, &e), 0);
	assert_int_equal(vg_slurm_bucket_take(&b, 1, &w, &e), VG_EIO);
	assert_string_equal(e.msg, "opening '/nonexistent/dir/bucket': No "
	    "such file or directory");
	vg_slurm_bucket_release(&b);
}

/* CLOCK_MONOTONIC in seconds. */
static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_processes_share(void **state)
{
	struct fix *f = *state;
	const double rate = 20, burst = 3, secs = 1.0;
	int pipefd[2], i, st, total = 0, n;
	double start = mono();
	pid_t pid[4];

	assert_int_equal(pipe(pipefd), 0);
	for (i = 0; i < 4; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			struct vg_slurm_bucket b;
			struct vg_err e;
			double w;
			int got = 0;

			close(pipefd[0]);
			if (vg_slurm_bucket_init(&b, f->path, rate, burst,
			    &e) != 0)
				_exit(1);
			while (mono() - start < secs) {
				if (vg_slurm_bucket_take(&b, mono(), &w,
				    &e) != 0)
					_exit(1);
				if (w == 0)
					got++;
				else
					usleep(1000);
			}
			if (write(pipefd[1], &got, sizeof got) !=
			    (ssize_t)sizeof got)
				_exit(1);
			vg_slurm_bucket_release(&b);
			_exit(0);
		}
	}
	close(pipefd[1]);
	for (i = 0; i < 4; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	while (read(pipefd[0], &n, sizeof n) == (ssize_t)sizeof n)
		total += n;
	close(pipefd[0]);
	/* burst + rate x elapsed, plus the one refilled while starting. */
	assert_true(total <= (int)(burst + rate * (mono() - start)) + 1);
	assert_true(total >= (int)(rate * secs * 0.5));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_processes_share, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-lock.c - the link()-based lease lock: exclusion, a refreshed lease
 * holds, a dead holder on this host is taken over at once, a holder on
 * another host after its lease, a bounded wait that names the holder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers/sifgen.h"
#include "common/path.h"
#include "sif-cache/lock.h"

struct fix {
	char	 dir[64];
	char	*path;
};

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-test-lock-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->path = vg_path_join(f->dir, "x.lock");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	vg_rm_rf(f->dir, NULL);
	free(f->path);
	free(f);
	return 0;
}

/* Entries in the lock directory (candidates must not pile up). */
static int
nfiles(struct fix *f)
{
	char *cmd = vg_xasprintf("ls -A %s | wc -l", f->dir);
	FILE *p = popen(cmd, "r");
	int n = -1;

	if (p != NULL) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	free(cmd);
	return n;
}

static void
test_exclusive(void **state)
{
	struct fix *f = *state;
	struct vg_lock *a = NULL, *b = NULL;
	struct vg_lock_owner o;
	struct vg_err e;
	char want[512];

	vg_err_init(&e);
	assert_int_equal(vg_lock_acquire(f->path, 30, 0, &a, &e), 0);
	assert_int_equal(nfiles(f), 1);
	assert_int_equal(vg_lock_owner(f->path, &o, &e), 0);
	assert_string_equal(o.host, vg_lock_hostname());
	assert_int_equal(o.pid, getpid());
	/* held by a live process (us): a bounded wait times out */
	assert_int_equal(vg_lock_acquire(f->path, 30, 0.2, &b, &e),
	    VG_ETIMEOUT);
	assert_null(b);
	snprintf(want, sizeof(want), "timed out after 0 s waiting for lock "
	    "'%s' held by %s pid %ld", f->path, vg_lock_hostname(),
	    (long)getpid());
	assert_string_equal(e.msg, want);
	assert_int_equal(nfiles(f), 1);
	vg_lock_release(a);
	assert_int_equal(nfiles(f), 0);
	assert_int_equal(vg_lock_owner(f->path, &o, &e), VG_ENOENT);
	assert_int_equal(vg_lock_acquire(f->path, 30, 0, &b, &e), 0);
	vg_lock_release(b);
	vg_lock_release(NULL);
	assert_int_equal(vg_lock_acquire(f->path, 0, 0, &b, &e), VG_EINVAL);
}

/* A holder that refreshes keeps the lock past many leases. */
static void
test_refreshed_lease_holds(void **state)
{
	struct fix *f = *state;
	struct vg_lock *l = NULL;
	struct vg_err e;
	long long t0;
	pid_t pid;
	int st, i;

	pid = fork();
	if (pid == 0) {
		struct timespec ts = { 0, 50000000 };

		if (vg_lock_acquire(f->path, 0.4, 0, &l, &e) != 0)
			_exit(1);
		for (i = 0; i < 30; i++) {	/* 1.5 s */
			nanosleep(&ts, NULL);
			if (vg_lock_refresh(l) != 0)
				_exit(2);
		}
		vg_lock_release(l);
		_exit(0);
	}
	while (access(f->path, F_OK) != 0)
		;
	t0 = vg_mono_ms();
	vg_err_init(&e);
	assert_int_equal(vg_lock_acquire(f->path, 0.4, 10, &l, &e), 0);
	assert_true(vg_mono_ms() - t0 >= 1300);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	vg_lock_release(l);
}

/* A holder killed on this host is recognised at once, lease or not. */
static void
test_dead_holder_same_host(void **state)
{
	struct fix *f = *state;
	struct vg_lock *l = NULL;
	struct vg_err e;
	long long t0;
	pid_t pid;
	int pfd[2];
	char c;

	/* The child says when vg_lock_acquire has returned: the lock file
	 * appears before the candidate it was linked from is removed, and
	 * a kill in between would leave that candidate behind. */
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (vg_lock_acquire(f->path, 600, 0, &l, &e) != 0)
			_exit(1);
		(void)!write(pfd[1], "x", 1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	t0 = vg_mono_ms();
	vg_err_init(&e);
	assert_int_equal(vg_lock_acquire(f->path, 600, 10, &l, &e), 0);
	assert_true(vg_mono_ms() - t0 < 1000);
	assert_int_equal(nfiles(f), 1);
	vg_lock_release(l);
	assert_int_equal(nfiles(f), 0);
}

/* A holder on another node that stops refreshing: taken after a lease. */
static void
test_stale_other_host(void **state)
{
	struct fix *f = *state;
	struct vg_lock *l = NULL;
	struct vg_err e;
	long long t0, dt;
	static const char text[] = "host node-that-died\npid 4242\n"
	    "acquired 1\nlease 1\n";

	assert_int_equal(sifgen_write(f->path, text, sizeof(text) - 1), 0);
	t0 = vg_mono_ms();
	vg_err_init(&e);
	assert_int_equal(vg_lock_acquire(f->path, 0.6, 10, &l, &e), 0);
	dt = vg_mono_ms() - t0;
	assert_true(dt >= 600);
	assert_true(dt < 3000);
	vg_lock_release(l);
	/* an mtime far in the past (by our clock) is stale at once */
	assert_int_equal(sifgen_write(f->path, text, sizeof(text) - 1), 0);
	{
		struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };

		assert_int_equal(utimensat(AT_FDCWD, f->path, ts, 0), 0);
	}
	t0 = vg_mono_ms();
	assert_int_equal(vg_lock_acquire(f->path, 5, 10, &l, &e), 0);
	assert_true(vg_mono_ms() - t0 < 1000);
	vg_lock_release(l);
	assert_int_equal(nfiles(f), 0);
}

/* A holder whose lock was taken over learns it on refresh. */
static void
test_refresh_detects_takeover(void **state)
{
	struct fix *f = *state;
	struct vg_lock *l = NULL, *m = NULL;
	struct vg_err e;
	struct timespec ts = { 0, 120000000 };

	vg_err_init(&e);
	assert_int_equal(vg_lock_acquire(f->path, 0.4, 0, &l, &e), 0);
	assert_int_equal(vg_lock_refresh(l), 0);
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(vg_lock_acquire(f->path, 0.4, 0, &m, &e), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(vg_lock_refresh(l), VG_EAGAIN);
	/* releasing a lost lock leaves the new holder's file alone */
	vg_lock_release(l);
	assert_int_equal(access(f->path, F_OK), 0);
	vg_lock_release(m);
	assert_int_equal(access(f->path, F_OK), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exclusive, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refreshed_lease_holds,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_holder_same_host,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_other_host, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refresh_detects_takeover,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

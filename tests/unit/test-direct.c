/*
 * test-direct.c - the direct scheduler with real processes: parallelism
 * limit, exit codes, timeouts (also of a task ignoring SIGTERM), cancel
 * of queued and running attempts, backend start failures, the wake fd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/eventfd.h>

#include "engine-fixture.h"
#include "schedulers/scheduler.h"

struct dt {
	struct fx		 f;
	struct vg_sched		 s;
	struct vg_attempt	*a;
	char			**dirs;
	size_t			 n;
};

/* Opens a direct scheduler over n commands with jobs slots. */
static void
dt_open(struct dt *t, const char *const *cmds, size_t n, int jobs)
{
	struct vg_err e;
	size_t i;

	memset(t, 0, sizeof(*t));
	fx_init(&t->f, cmds, n);
	fx_fail_start = 0;
	t->n = n;
	t->a = calloc(n, sizeof(*t->a));
	t->dirs = calloc(n, sizeof(*t->dirs));
	for (i = 0; i < n; i++) {
		t->dirs[i] = vg_xasprintf("%s/t%zu", t->f.home, i);
		assert_int_equal(mkdir(t->dirs[i], 0700), 0);
		t->a[i].m = &t->f.m;
		t->a[i].task = &t->f.ts.v[i];
		t->a[i].run_id = "R";
		t->a[i].task_dir = t->dirs[i];
		t->a[i].attempt = 1;
		t->a[i].kill_grace = 0.3;
		t->a[i].pidfd = -1;
	}
	t->s.ops = &vg_scheduler_direct;
	t->s.m = &t->f.m;
	t->s.run_id = "R";
	t->s.jobs = jobs;
	t->s.backend = &fx_sh_backend;
	vg_err_init(&e);
	assert_int_equal(t->s.ops->open(&t->s, &e), 0);
}

static void
dt_close(struct dt *t)
{
	size_t i;

	t->s.ops->close(&t->s);
	for (i = 0; i < t->n; i++)
		free(t->dirs[i]);
	free(t->dirs);
	free(t->a);
	fx_release(&t->f);
}

/*
 * Polls until every attempt is terminal, recording each one's final
 * update in out and the most attempts ever running at once in *peak.
 * Every attempt that runs holds a slot number of 1..jobs no other
 * running attempt holds, and ends with the number it started with
 * (when its start was seen here).
 */
static void
dt_drain(struct dt *t, struct vg_sched_update *out, int *peak)
{
	struct vg_sched_update *ups;
	size_t n, k, done = 0;
	struct vg_err e;
	int running = 0, i, busy[64] = { 0 };
	int *slot = calloc(t->n + 1, sizeof(*slot));

	vg_err_init(&e);
	if (peak != NULL)
		*peak = 0;
	/* Updates from submit (RUNNING) come with the first poll. */
	while (done < t->n) {
		assert_int_equal(t->s.ops->poll(&t->s, 5000, -1, &ups, &n, &e),
		    0);
		for (k = 0; k < n; k++) {
			i = (int)(ups[k].a - t->a);
			assert_true(i >= 0 && (size_t)i < t->n);
			if (ups[k].state == VG_ST_RUNNING) {
				running++;
				assert_int_equal(atoi(ups[k].handle),
				    ups[k].a->pid);
				assert_true(ups[k].slot >= 1 &&
				    ups[k].slot <= t->s.jobs &&
				    ups[k].slot < 64);
				assert_int_equal(busy[ups[k].slot], 0);
				busy[ups[k].slot] = 1;
				slot[i] = ups[k].slot;
			} else if (vg_state_terminal(ups[k].state)) {
				if (ups[k].a->pid > 0)
					running--;
				if (slot[i] > 0)
					assert_int_equal(ups[k].slot,
					    slot[i]);
				busy[slot[i]] = 0;
				out[i] = ups[k];
				done++;
			}
			if (peak != NULL && running > *peak)
				*peak = running;
		}
	}
	assert_int_equal(t->s.ops->active(&t->s), 0);
	free(slot);
}

static void
test_exit_codes_and_parallelism(void **state)
{
	static const char *const cmds[] = {
		"sleep 0.1; exit 0", "sleep 0.1; exit 3", "sleep 0.1",
		"kill -9 $$", "sleep 0.1; exit 99",
	};
	struct vg_sched_update res[5];
	struct vg_err e;
	struct dt t;
	size_t i;
	int peak;

	(void)state;
	dt_open(&t, cmds, 5, 2);
	assert_int_equal(t.s.window, 6);
	vg_err_init(&e);
	for (i = 0; i < 5; i++)
		assert_int_equal(t.s.ops->submit(&t.s, &t.a[i], &e), 0);
	assert_int_equal(t.s.ops->active(&t.s), 5);
	dt_drain(&t, res, &peak);
	assert_int_equal(peak, 2);
	assert_int_equal(res[0].state, VG_ST_SUCCEEDED);
	assert_int_equal(res[0].result.exit_code, 0);
	assert_int_equal(res[1].state, VG_ST_FAILED);
	assert_int_equal(res[1].result.exit_code, 3);
	assert_int_equal(res[2].state, VG_ST_SUCCEEDED);
	assert_int_equal(res[3].state, VG_ST_FAILED);
	assert_int_equal(res[3].result.signal, SIGKILL);
	assert_int_equal(res[4].state, VG_ST_OOM);
	for (i = 0; i < 5; i++)
		assert_true(res[i].result.ended >= res[i].result.started);
	dt_close(&t);
}

/* Counts processes of group pgid that are not zombies. */
static int
live_in_group(pid_t pgid)
{
	char path[300], buf[512], *p, st;
	struct dirent *de;
	int n = 0, pg;
	DIR *d;
	FILE *f;

	d = opendir("/proc");
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%c %*d %d", &st, &pg) == 2 &&
		    pg == pgid && st != 'Z')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* live_in_group(pgid) once it reaches 0, or after ms milliseconds: a
 * SIGKILL to a group is delivered at once, but a loaded machine may take
 * a moment to let each process die. */
static int
live_in_group_after(pid_t pgid, int ms)
{
	int n;

	while ((n = live_in_group(pgid)) > 0 && ms > 0) {
		usleep(10000);
		ms -= 10;
	}
	return n;
}

static void
test_timeout_kills_group(void **state)
{
	static const char *const cmds[] = {
		"sleep 30",
		/* Ignores SIGTERM, and so does its child: SIGKILL after
		 * the grace period must end both. */
		"trap '' TERM; sh -c 'trap \"\" TERM; sleep 30' & wait; "
		"sleep 30",
	};
	struct vg_sched_update res[2];
	long long t0, ms;
	struct vg_err e;
	struct dt t;

	(void)state;
	dt_open(&t, cmds, 2, 2);
	t.a[0].timeout = 0.2;
	t.a[1].timeout = 0.2;
	vg_err_init(&e);
	t0 = vg_mono_ms();
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[0], &e), 0);
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[1], &e), 0);
	dt_drain(&t, res, NULL);
	ms = vg_mono_ms() - t0;
	assert_int_equal(res[0].state, VG_ST_TIMEOUT);
	assert_string_equal(res[0].result.reason, "timed out after 0.2s");
	assert_int_equal(res[1].state, VG_ST_TIMEOUT);
	/* 0.2 s timeout + 0.3 s grace, well under the 30 s sleeps. */
	assert_true(ms >= 450 && ms < 3000);
	/* No live process of the group is left (zombies reparented to
	 * init do not count: their reaping is init's business). */
	assert_int_equal(live_in_group_after(t.a[1].pid, 2000), 0);
	dt_close(&t);
}

static void
test_cancel_queued_and_running(void **state)
{
	static const char *const cmds[] = { ": > ready; exec sleep 30",
	    "sleep 30" };
	struct vg_sched_update *ups;
	struct vg_sched_update res[2];
	struct vg_err e;
	struct dt t;
	char *ready;
	size_t n;
	int w;

	(void)state;
	dt_open(&t, cmds, 2, 1);
	vg_err_init(&e);
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[0], &e), 0);
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[1], &e), 0);
	assert_int_equal(t.s.ops->poll(&t.s, 0, -1, &ups, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ups[0].state, VG_ST_RUNNING);
	assert_ptr_equal(ups[0].a, &t.a[0]);
	/* Cancelled once its shell runs: a signal sent between fork and
	 * exec reaches the fixture's copy of this process instead (under
	 * valgrind a slow one, whose end was seen as SIGKILL in about one
	 * run of ten). */
	ready = vg_xasprintf("%s/ready", t.dirs[0]);
	for (w = 0; w < 1000 && access(ready, F_OK) != 0; w++)
		usleep(10000);
	assert_int_equal(access(ready, F_OK), 0);
	free(ready);
	/* Queued: dropped at once, its CANCELLED update still owed. */
	assert_int_equal(t.s.ops->cancel(&t.s, &t.a[1], 0, &e), 0);
	assert_int_equal(t.s.ops->active(&t.s), 2);
	/* Running: SIGTERM, reported CANCELLED. */
	assert_int_equal(t.s.ops->cancel(&t.s, &t.a[0], 0, &e), 0);
	t.n = 2;
	memset(res, 0, sizeof(res));
	{
		size_t done = 0, k;

		while (done < 2) {
			assert_int_equal(t.s.ops->poll(&t.s, 5000, -1, &ups,
			    &n, &e), 0);
			for (k = 0; k < n; k++)
				if (vg_state_terminal(ups[k].state)) {
					res[ups[k].a - t.a] = ups[k];
					done++;
				}
		}
	}
	assert_int_equal(res[1].state, VG_ST_CANCELLED);
	assert_string_equal(res[1].result.reason,
	    "cancelled before it started");
	assert_int_equal(t.a[1].pid, 0);
	assert_int_equal(res[0].state, VG_ST_CANCELLED);
	assert_string_equal(res[0].result.reason, "cancelled");
	assert_int_equal(res[0].result.signal, SIGTERM);
	dt_close(&t);
}

static void
test_forced_cancel(void **state)
{
	static const char *const cmds[] = { "trap '' TERM; sleep 30" };
	struct vg_sched_update res[1];
	struct vg_err e;
	long long t0;
	struct dt t;

	(void)state;
	dt_open(&t, cmds, 1, 1);
	t.a[0].kill_grace = 20;
	vg_err_init(&e);
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[0], &e), 0);
	usleep(100000);
	t0 = vg_mono_ms();
	assert_int_equal(t.s.ops->cancel(&t.s, &t.a[0], 0, &e), 0);
	/* A second plain cancel does not start the grace again; a forced
	 * one does not wait for the 20 s grace. */
	assert_int_equal(t.s.ops->cancel(&t.s, &t.a[0], 0, &e), 0);
	usleep(200000);
	assert_int_equal(t.s.ops->active(&t.s), 1);
	assert_int_equal(t.s.ops->cancel(&t.s, &t.a[0], 1, &e), 0);
	dt_drain(&t, res, NULL);
	assert_true(vg_mono_ms() - t0 < 3000);
	assert_int_equal(res[0].state, VG_ST_CANCELLED);
	assert_int_equal(res[0].result.signal, SIGKILL);
	dt_close(&t);
}

static void
test_start_failure(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_sched_update res[1];
	struct vg_err e;
	struct dt t;

	(void)state;
	dt_open(&t, cmds, 1, 1);
	fx_fail_start = 1;
	vg_err_init(&e);
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[0], &e), 0);
	dt_drain(&t, res, NULL);
	assert_int_equal(res[0].state, VG_ST_BACKEND_ERROR);
	assert_string_equal(res[0].result.reason, "sh: refused to start");
	fx_fail_start = 0;
	dt_close(&t);
}

static void
test_wake_fd(void **state)
{
	static const char *const cmds[] = { "sleep 30" };
	struct vg_sched_update *ups;
	struct vg_err e;
	struct dt t;
	uint64_t one = 1;
	long long t0;
	size_t n;
	int efd;

	(void)state;
	dt_open(&t, cmds, 1, 1);
	vg_err_init(&e);
	efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	assert_int_equal(t.s.ops->submit(&t.s, &t.a[0], &e), 0);
	assert_int_equal(t.s.ops->poll(&t.s, 0, efd, &ups, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(write(efd, &one, sizeof(one)), sizeof(one));
	t0 = vg_mono_ms();
	assert_int_equal(t.s.ops->poll(&t.s, 10000, efd, &ups, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_true(vg_mono_ms() - t0 < 1000);
	/* Without the wake fd, the timeout bounds the wait (where the
	 * kernel lacks pidfds, poll returns early and more often). */
	t0 = vg_mono_ms();
	while (vg_mono_ms() - t0 < 100) {
		assert_int_equal(t.s.ops->poll(&t.s, 100, -1, &ups, &n, &e),
		    0);
		assert_int_equal(n, 0);
	}
	assert_true(vg_mono_ms() - t0 < 1000);
	assert_int_equal(t.s.ops->cancel(&t.s, &t.a[0], 1, &e), 0);
	{
		struct vg_sched_update res[1];

		dt_drain(&t, res, NULL);
	}
	close(efd);
	dt_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes_and_parallelism),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_cancel_queued_and_running),
		cmocka_unit_test(test_forced_cancel),
		cmocka_unit_test(test_start_failure),
		cmocka_unit_test(test_wake_fd),
	};

	return cmocka_run_group_tests_name("direct", tests, NULL, NULL);
}

/*
 * test-run.c - the run driver over the direct scheduler with real
 * processes: results recorded, retries with backoff and resource
 * scaling, denied tasks, resume after a crash, cancel by signal and by
 * per-task mark, retry of failed tasks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine-fixture.h"
#include "runner/core/leftover.h"
#include "runner/core/progress.h"
#include "common/proc.h"
#include "runner/core/run.h"
#include "runner/core/store.h"

struct rt {
	struct fx	 f;
	struct vg_store	*st;
	char		 id[VG_RUN_ID_MAX];
	char		*dir;
};

/* Creates a run of n commands; denied may be NULL. */
static void
rt_create(struct rt *t, const char *const *cmds, size_t n,
    char *const *denied)
{
	struct vg_run_plan p;
	struct vg_err e;

	memset(t, 0, sizeof(*t));
	fx_init(&t->f, cmds, n);
	vg_err_init(&e);
	assert_int_equal(vg_store_open(t->f.home, &t->st, &e), 0);
	vg_run_id_make(t->id);
	memset(&p, 0, sizeof(p));
	p.id = t->id;
	p.m = &t->f.m;
	p.ts = &t->f.ts;
	p.manifest_json = "{}";
	p.denied = denied;
	assert_int_equal(vg_run_create(t->st, &p, &t->dir, &e), 0);
}

/* Drives the run with jobs slots through the sh backend. */
static int
rt_drive(struct rt *t, int jobs, int signals, struct vg_run_result *res,
    struct vg_err *e)
{
	struct vg_run_opts o;

	memset(&o, 0, sizeof(o));
	o.jobs = jobs;
	o.backend = &fx_sh_backend;
	o.signals = signals;
	vg_err_init(e);
	return vg_run_drive(t->st, t->id, &t->f.m, &t->f.ts, &o, res, e);
}

static void
rt_release(struct rt *t)
{
	vg_store_close(t->st);
	free(t->dir);
	fx_release(&t->f);
}

/* Loads task records (caller frees). */
static struct vg_task_rec *
rt_tasks(struct rt *t)
{
	struct vg_task_rec *v;
	struct vg_err e;
	size_t n;

	vg_err_init(&e);
	assert_int_equal(vg_store_tasks_load(t->st, t->id, &v, &n, &e), 0);
	assert_int_equal(n, t->f.ts.n);
	return v;
}

static int
attempts_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%d:%s:%d:%s;", a->attempt, vg_state_name(a->state),
	    a->exit_code, a->reason ? a->reason : "");
	return 0;
}

/* The attempts of task i as "n:STATE:code:reason;..." (caller frees). */
static char *
rt_attempts(struct rt *t, int i)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_store_attempt_each(t->st, t->id, i, attempts_cb,
	    &b, &e), 0);
	return vg_buf_detach(&b);
}

/* Reads a task's stdout. */
static char *
rt_stdout(struct rt *t, int i)
{
	struct vg_buf b = VG_BUF_INIT;
	char *p;

	p = vg_xasprintf("%s/tasks/%d/stdout", t->dir, i);
	assert_int_equal(vg_read_file(p, 1 << 20, &b, NULL), 0);
	free(p);
	if (b.data == NULL)
		return vg_xstrdup("");
	return vg_buf_detach(&b);
}

static void
test_results_recorded(void **state)
{
	static const char *const cmds[] = {
		"echo out-$VIGIL_TASK_INDEX; exit 0", "exit 4", "echo x",
		"kill -KILL $$",
	};
	struct vg_run_result res;
	struct vg_run_info ri;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	char *s;

	(void)state;
	rt_create(&t, cmds, 4, NULL);
	assert_int_equal(rt_drive(&t, 2, 0, &res, &e), 0);
	assert_int_equal(res.state, VG_ST_FAILED);
	assert_int_equal(vg_run_exit_status(&res), 1);
	assert_int_equal(res.counts[VG_ST_SUCCEEDED], 2);
	assert_int_equal(res.counts[VG_ST_FAILED], 2);
	v = rt_tasks(&t);
	assert_int_equal(v[0].state, VG_ST_SUCCEEDED);
	assert_int_equal(v[0].exit_code, 0);
	assert_int_equal(v[1].state, VG_ST_FAILED);
	assert_int_equal(v[1].exit_code, 4);
	assert_string_equal(v[1].reason, "exit 4");
	assert_int_equal(v[3].signal, SIGKILL);
	assert_string_equal(v[3].reason, "killed by signal 9 (Killed)");
	assert_int_equal(v[2].attempts, 1);
	assert_true(v[2].pid > 0);
	assert_true(v[2].ended >= v[2].started && v[2].started > 0);
	free(v);
	s = rt_stdout(&t, 0);
	assert_string_equal(s, "out-0\n");
	free(s);
	s = rt_attempts(&t, 1);
	assert_string_equal(s, "1:FAILED:4:exit 4;");
	free(s);
	vg_err_init(&e);
	assert_int_equal(vg_store_run_get(t.st, t.id, &ri, &e), 0);
	assert_int_equal(ri.state, VG_ST_FAILED);
	assert_int_equal(ri.pid, 0);
	assert_true(ri.ended > 0);
	vg_run_info_release(&ri);
	rt_release(&t);
}

static void
test_retry_then_succeed(void **state)
{
	/* Fails on attempt 1 and 2, succeeds on 3. */
	static const char *const cmds[] = {
		"[ \"$VIGIL_ATTEMPT\" -ge 3 ] || exit 7",
		"exit 7",
	};
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	double t0;
	char *s;

	(void)state;
	rt_create(&t, cmds, 2, NULL);
	t.f.m.retry.max = 2;
	t.f.m.retry.on = VG_RETRY_FAILED;
	t.f.m.retry.backoff = 0.1;
	t.f.m.retry.backoff_max = 10;
	t0 = vg_now();
	assert_int_equal(rt_drive(&t, 2, 0, &res, &e), 0);
	/* Backoff 0.1 s then 0.2 s. */
	assert_true(vg_now() - t0 >= 0.3);
	assert_int_equal(res.counts[VG_ST_SUCCEEDED], 1);
	assert_int_equal(res.counts[VG_ST_FAILED], 1);
	v = rt_tasks(&t);
	assert_int_equal(v[0].attempts, 3);
	assert_int_equal(v[0].tries, 3);
	assert_int_equal(v[1].attempts, 3);
	assert_string_equal(v[1].reason, "exit 7");
	free(v);
	s = rt_attempts(&t, 0);
	assert_string_equal(s, "1:FAILED:7:exit 7;2:FAILED:7:exit 7;"
	    "3:SUCCEEDED:0:;");
	free(s);
	rt_release(&t);
}

static void
test_retry_on_filter_and_scaling(void **state)
{
	static const char *const cmds[] = {
		"exit 3",		/* FAILED: not in retry.on */
		"exit 99",		/* OOM: retried, memory scaled */
		"sleep 5",		/* TIMEOUT: retried, time scaled */
	};
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;

	(void)state;
	t.f.m.timeout = 0;
	rt_create(&t, cmds, 3, NULL);
	t.f.m.retry.max = 1;
	t.f.m.retry.on = VG_RETRY_OOM | VG_RETRY_TIMEOUT;
	t.f.m.retry.memory_factor = 2;
	t.f.m.retry.time_factor = 1.5;
	/* Effective resources live in the task rows. */
	v = rt_tasks(&t);
	vg_err_init(&e);
	v[1].memory = 1000;
	v[2].timeout = 0.2;
	v[2].time = 60;
	assert_int_equal(vg_store_task_put(t.st, t.id, &v[1], &e), 0);
	assert_int_equal(vg_store_task_put(t.st, t.id, &v[2], &e), 0);
	free(v);
	assert_int_equal(rt_drive(&t, 3, 0, &res, &e), 0);
	v = rt_tasks(&t);
	assert_int_equal(v[0].attempts, 1);
	assert_int_equal(v[0].state, VG_ST_FAILED);
	assert_int_equal(v[1].attempts, 2);
	assert_int_equal(v[1].state, VG_ST_OOM);
	assert_true(v[1].memory == 2000);
	assert_int_equal(v[2].attempts, 2);
	assert_int_equal(v[2].state, VG_ST_TIMEOUT);
	assert_true(v[2].time == 90);
	assert_true(v[2].timeout > 0.29 && v[2].timeout < 0.31);
	assert_string_equal(v[2].reason, "timed out after 0.3s");
	free(v);
	rt_release(&t);
}

static void
test_denied_never_runs(void **state)
{
	static const char *const cmds[] = { "echo ran > ran", "true" };
	char why[] = "deny: destructive: test";
	char *denied[2] = { why, NULL };
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct stat sb;
	struct rt t;
	char *p;

	(void)state;
	fx_starts = 0;
	rt_create(&t, cmds, 2, denied);
	assert_int_equal(rt_drive(&t, 2, 0, &res, &e), 0);
	assert_int_equal(res.state, VG_ST_DENIED);
	assert_int_equal(vg_run_exit_status(&res), 3);
	assert_int_equal(fx_starts, 1);
	v = rt_tasks(&t);
	assert_int_equal(v[0].state, VG_ST_DENIED);
	assert_int_equal(v[0].attempts, 0);
	assert_string_equal(v[0].reason, "deny: destructive: test");
	assert_int_equal(v[1].state, VG_ST_SUCCEEDED);
	free(v);
	p = vg_xasprintf("%s/tasks/0", t.dir);
	assert_int_equal(stat(p, &sb), -1);
	free(p);
	rt_release(&t);
}

static void
test_resume_after_crash(void **state)
{
	static const char *const cmds[] = {
		"echo done-before",
		"echo second > mark; echo $VIGIL_ATTEMPT",
		"echo never-started",
	};
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	pid_t orphan;
	char *s, env[80];
	unsigned long long start;

	(void)state;
	rt_create(&t, cmds, 3, NULL);
	/* What a killed vigil leaves: task 0 done, task 1 RUNNING with a
	 * live process carrying the run's id, task 2 PENDING; the run is
	 * RUNNING with a dead owner. */
	snprintf(env, sizeof(env), "VIGIL_RUN_ID=%s", t.id);
	orphan = fork();
	if (orphan == 0) {
		char a0[] = "sleep", a1[] = "30", e1[] = "VIGIL_TASK_INDEX=1";
		char *const argv[] = { a0, a1, NULL };
		char *const envp[] = { env, e1, NULL };

		setpgid(0, 0);
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	usleep(50000);
	assert_int_equal(vg_pid_start_time(orphan, &start), 0);
	v = rt_tasks(&t);
	vg_err_init(&e);
	v[0].state = VG_ST_SUCCEEDED;
	v[0].attempts = 1;
	v[0].exit_code = 0;
	v[1].state = VG_ST_RUNNING;
	v[1].attempts = 1;
	v[1].pid = orphan;
	v[1].pid_start = start;
	assert_int_equal(vg_store_task_put(t.st, t.id, &v[0], &e), 0);
	assert_int_equal(vg_store_task_put(t.st, t.id, &v[1], &e), 0);
	assert_int_equal(vg_store_run_set_state(t.st, t.id, VG_ST_RUNNING,
	    "started", &e), 0);
	assert_int_equal(vg_store_run_set_owner(t.st, t.id, 999999, 1, &e), 0);
	free(v);
	fx_starts = 0;
	t.f.m.retry.max = 0;
	assert_int_equal(rt_drive(&t, 2, 0, &res, &e), 0);
	assert_int_equal(res.state, VG_ST_SUCCEEDED);
	/* Task 0 did not run again; 1 and 2 did. */
	assert_int_equal(fx_starts, 2);
	/* The orphan was killed (we are its parent: reap it). */
	{
		int ws;

		assert_int_equal(waitpid(orphan, &ws, 0), orphan);
		assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	}
	v = rt_tasks(&t);
	assert_int_equal(v[0].attempts, 1);
	assert_int_equal(v[1].attempts, 2);
	/* The interrupted attempt does not count against retry.max. */
	assert_int_equal(v[1].tries, 1);
	assert_int_equal(v[1].state, VG_ST_SUCCEEDED);
	free(v);
	s = rt_attempts(&t, 1);
	assert_string_equal(s, "1:LOST:-1:interrupted: vigil exited;"
	    "2:SUCCEEDED:0:;");
	free(s);
	s = rt_stdout(&t, 1);
	assert_string_equal(s, "2\n");
	free(s);
	rt_release(&t);
}

static void
test_refuses_live_owner(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_run_result res;
	unsigned long long start;
	struct vg_err e;
	struct rt t;
	char *want;

	(void)state;
	rt_create(&t, cmds, 1, NULL);
	assert_int_equal(vg_pid_start_time(getppid(), &start), 0);
	vg_err_init(&e);
	assert_int_equal(vg_store_run_set_owner(t.st, t.id, getppid(), start,
	    &e), 0);
	assert_int_equal(rt_drive(&t, 1, 0, &res, &e), VG_EAGAIN);
	want = vg_xasprintf("run '%s' is being driven by vigil process %ld "
	    "on host '%s'; 'vigil status %s' follows it, 'vigil cancel %s' "
	    "stops it", t.id, (long)getppid(), vg_self_host(), t.id, t.id);
	assert_string_equal(e.msg, want);
	free(want);
	rt_release(&t);
}

/* Two claims of a run from the same dead owner: the first wins, the
 * second is refused naming the winner; a driver on another host is
 * never taken over from here. */
static void
test_claim_once(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_run_info a, b;
	struct vg_err e;
	struct rt t;
	int won;

	(void)state;
	rt_create(&t, cmds, 1, NULL);
	vg_err_init(&e);
	/* A dead driver: pid 1 with a start time it does not have. */
	assert_int_equal(vg_store_run_set_owner(t.st, t.id, 1, 12345, &e), 0);
	assert_int_equal(vg_store_run_get(t.st, t.id, &a, &e), 0);
	assert_int_equal(vg_store_run_get(t.st, t.id, &b, &e), 0);
	assert_int_equal(vg_run_claim(t.st, &a, &e), 0);
	assert_int_equal(a.pid, getpid());
	/* b still names the dead owner: its compare-and-set loses. */
	assert_int_equal(vg_store_run_claim(t.st, t.id, b.pid, b.pid_start,
	    4242, 1, "elsewhere", &won, &e), 0);
	assert_int_equal(won, 0);
	vg_run_info_release(&a);
	vg_run_info_release(&b);
	/* Recorded on another host: alive as far as this host can tell. */
	assert_int_equal(vg_store_run_claim(t.st, t.id, getpid(), 0, 4242, 1,
	    "elsewhere", &won, &e), 0);
	assert_int_equal(won, 0);	/* the start time differs */
	assert_int_equal(vg_store_run_get(t.st, t.id, &a, &e), 0);
	assert_int_equal(vg_store_run_claim(t.st, t.id, a.pid, a.pid_start,
	    4242, 1, "elsewhere", &won, &e), 0);
	assert_int_equal(won, 1);
	vg_run_info_release(&a);
	assert_int_equal(vg_store_run_get(t.st, t.id, &a, &e), 0);
	assert_int_equal(vg_run_owner_elsewhere(&a), 1);
	assert_int_equal(vg_run_owner_alive(&a), 1);
	assert_int_equal(vg_run_claim(t.st, &a, &e), VG_EAGAIN);
	assert_non_null(strstr(e.msg, "on host 'elsewhere'"));
	vg_run_info_release(&a);
	rt_release(&t);
}

static void
test_cancel_by_signal(void **state)
{
	/* Task 0 signals the driver (its parent) and shrugs off the
	 * SIGTERM that comes back; the others wait. */
	static const char *const cmds[] = {
		"trap '' TERM; sleep 0.2; kill -TERM $PPID; sleep 0.2",
		"sleep 30", "sleep 30", "sleep 30", "sleep 30", "sleep 30",
		"sleep 30", "sleep 30",
	};
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	long long t0;

	(void)state;
	rt_create(&t, cmds, 8, NULL);
	t0 = vg_mono_ms();
	assert_int_equal(rt_drive(&t, 2, 1, &res, &e), 0);
	assert_true(vg_mono_ms() - t0 < 5000);
	assert_int_equal(res.state, VG_ST_CANCELLED);
	assert_int_equal(vg_run_exit_status(&res), 5);
	v = rt_tasks(&t);
	assert_int_equal(v[0].state, VG_ST_SUCCEEDED);
	assert_int_equal(v[1].state, VG_ST_CANCELLED);
	assert_string_equal(v[1].reason, "cancelled");
	/* Queued in the scheduler, or held by an executor (window = 3 x
	 * jobs): dropped there. */
	assert_int_equal(v[3].state, VG_ST_CANCELLED);
	assert_string_equal(v[3].reason, "cancelled before it started");
	assert_int_equal(v[5].state, VG_ST_CANCELLED);
	assert_string_equal(v[5].reason, "cancelled before it started");
	/* Never handed over: cancelled in place. */
	assert_int_equal(v[7].state, VG_ST_CANCELLED);
	assert_int_equal(v[7].attempts, 0);
	assert_string_equal(v[7].reason, "cancelled (SIGTERM)");
	free(v);
	rt_release(&t);
}

static void
test_cancel_one_task(void **state)
{
	/* Task 1 is marked for cancel by task 0, which then pokes the
	 * driver with SIGUSR1, as vigil cancel RUN/1 does. */
	static const char *const cmds[] = {
		"sleep 0.3; sqlite3 \"$DB\" \"UPDATE tasks SET cancel_req=1 "
		"WHERE idx=1\" && kill -USR1 $PPID",
		"sleep 30",
	};
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;

	(void)state;
	if (system("command -v sqlite3 >/dev/null") != 0) {
		printf("skipped: no sqlite3 program to check the file with\n");
		skip();
	}
	rt_create(&t, cmds, 2, NULL);
	{
		char *db = vg_xasprintf("%s/vigil.db", t.f.home);
		char *cmd = vg_xasprintf("DB=%s; %s", db,
		    t.f.ts.v[0].command.shell);

		free(t.f.ts.v[0].command.shell);
		t.f.ts.v[0].command.shell = cmd;
		free(db);
	}
	assert_int_equal(rt_drive(&t, 2, 1, &res, &e), 0);
	v = rt_tasks(&t);
	assert_int_equal(v[0].state, VG_ST_SUCCEEDED);
	assert_int_equal(v[1].state, VG_ST_CANCELLED);
	/* Nothing failed; what did not succeed was cancelled. */
	assert_int_equal(res.state, VG_ST_CANCELLED);
	free(v);
	rt_release(&t);
}

static void
test_reset_failed(void **state)
{
	static const char *const cmds[] = {
		"[ -e ../../ok ] || { touch ../../ok; exit 1; }", "true",
	};
	struct vg_run_result res;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	int n;

	(void)state;
	rt_create(&t, cmds, 2, NULL);
	assert_int_equal(rt_drive(&t, 2, 0, &res, &e), 0);
	assert_int_equal(res.state, VG_ST_FAILED);
	assert_int_equal(vg_run_reset_failed(t.st, t.id, &n, &e), 0);
	assert_int_equal(n, 1);
	fx_starts = 0;
	assert_int_equal(rt_drive(&t, 2, 0, &res, &e), 0);
	assert_int_equal(res.state, VG_ST_SUCCEEDED);
	assert_int_equal(fx_starts, 1);
	v = rt_tasks(&t);
	assert_int_equal(v[0].attempts, 2);
	assert_int_equal(v[1].attempts, 1);
	free(v);
	rt_release(&t);
}

static void
test_task_mismatch(void **state)
{
	static const char *const cmds[] = { "true", "true" };
	struct vg_run_result res;
	struct vg_err e;
	struct rt t;
	char *want;

	(void)state;
	rt_create(&t, cmds, 2, NULL);
	t.f.ts.n = 1;
	assert_int_equal(rt_drive(&t, 1, 0, &res, &e), VG_ESTATE);
	want = vg_xasprintf("run '%s' has 2 tasks recorded but its manifest "
	    "expands to 1", t.id);
	assert_string_equal(e.msg, want);
	free(want);
	t.f.ts.n = 2;
	rt_release(&t);
}

/* Cancelling a run whose vigil is gone: one task, then the rest. */
static void
test_cancel_orphan(void **state)
{
	static const char *const cmds[] = { "true", "sleep 30", "true" };
	const char *why = "cancelled by vigil cancel (no vigil was running)";
	struct vg_buf said = VG_BUF_INIT;
	struct vg_run_info r;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	char *s;

	(void)state;
	rt_create(&t, cmds, 3, NULL);
	v = rt_tasks(&t);
	vg_err_init(&e);
	v[0].state = VG_ST_SUCCEEDED;
	v[0].attempts = 1;
	v[1].state = VG_ST_RUNNING;
	v[1].attempts = 1;
	assert_int_equal(vg_store_task_put(t.st, t.id, &v[0], &e), 0);
	assert_int_equal(vg_store_task_put(t.st, t.id, &v[1], &e), 0);
	assert_int_equal(vg_store_run_set_state(t.st, t.id, VG_ST_RUNNING,
	    "started", &e), 0);
	free(v);

	/* One task: the run stays open while task 1 is. */
	assert_int_equal(vg_store_run_get(t.st, t.id, &r, &e), 0);
	assert_string_equal(r.scheduler, "direct");
	assert_int_equal(vg_run_cancel_orphan(t.st, &r, 2, &said, &e), 0);
	assert_string_equal(vg_buf_str(&said), "leftover processes killed");
	vg_run_info_release(&r);
	v = rt_tasks(&t);
	assert_int_equal(v[0].state, VG_ST_SUCCEEDED);
	assert_int_equal(v[1].state, VG_ST_RUNNING);
	assert_int_equal(v[2].state, VG_ST_CANCELLED);
	assert_string_equal(v[2].reason, why);
	assert_true(v[2].ended > 0);
	free(v);
	assert_int_equal(vg_store_run_get(t.st, t.id, &r, &e), 0);
	assert_int_equal(r.state, VG_ST_RUNNING);

	/* The whole run: the last open task, then the run. */
	vg_buf_reset(&said);
	assert_int_equal(vg_run_cancel_orphan(t.st, &r, -1, &said, &e), 0);
	vg_run_info_release(&r);
	v = rt_tasks(&t);
	assert_int_equal(v[1].state, VG_ST_CANCELLED);
	assert_string_equal(v[1].reason, why);
	assert_int_equal(v[1].cancel_req, 0);
	free(v);
	assert_int_equal(vg_store_run_get(t.st, t.id, &r, &e), 0);
	assert_int_equal(r.state, VG_ST_CANCELLED);
	assert_string_equal(r.reason, why);
	assert_true(r.ended > 0);
	assert_int_equal(r.counts[VG_ST_CANCELLED], 2);
	vg_run_info_release(&r);
	/* No attempt was made up for it. */
	s = rt_attempts(&t, 1);
	assert_string_equal(s, "");
	free(s);
	vg_buf_release(&said);
	rt_release(&t);
}

/*
 * Group commit: with a window longer than the run (every step joins one
 * transaction but for quiet ones) and with none (a transaction per
 * step), every task's end is recorded, the run ends committed, and
 * progress printed each task's end once (held lines released).
 */
static void
test_group_commit_reports(void **state)
{
	static const char *const cmds[] = {
		"exit 0", "exit 0", "exit 0", "exit 0", "exit 0", "exit 0",
	};
	static const char *const windows[] = { "1000", "0" };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_run_result res;
	struct vg_run_opts o;
	struct vg_run_info ri;
	struct vg_task_rec *v;
	struct vg_err e;
	struct rt t;
	const char *at;
	char *path;
	size_t k, i;
	int fd, n;

	(void)state;
	for (k = 0; k < 2; k++) {
		assert_int_equal(setenv("VIGIL_GROUP_MS", windows[k], 1), 0);
		rt_create(&t, cmds, 6, NULL);
		path = vg_xasprintf("%s/progress", t.f.home);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		memset(&o, 0, sizeof(o));
		o.jobs = 2;
		o.backend = &fx_sh_backend;
		o.progress = vg_progress_new(fd, VG_PROGRESS_LINES, t.id, 6,
		    NULL);
		vg_err_init(&e);
		assert_int_equal(vg_run_drive(t.st, t.id, &t.f.m, &t.f.ts, &o,
		    &res, &e), 0);
		vg_progress_free(o.progress);
		close(fd);
		assert_int_equal(res.state, VG_ST_SUCCEEDED);
		assert_int_equal(res.counts[VG_ST_SUCCEEDED], 6);
		v = rt_tasks(&t);
		for (i = 0; i < 6; i++)
			assert_int_equal(v[i].state, VG_ST_SUCCEEDED);
		free(v);
		vg_err_init(&e);
		assert_int_equal(vg_store_run_get(t.st, t.id, &ri, &e), 0);
		assert_int_equal(ri.state, VG_ST_SUCCEEDED);
		assert_int_equal(ri.pid, 0);
		vg_run_info_release(&ri);
		vg_buf_reset(&out);
		assert_int_equal(vg_read_file(path, 1 << 20, &out, NULL), 0);
		for (n = 0, at = vg_buf_str(&out);
		    (at = strstr(at, "] SUCCEEDED exit 0\n")) != NULL; at++)
			n++;
		assert_int_equal(n, 6);
		assert_non_null(strstr(vg_buf_str(&out), "SUCCEEDED in "));
		free(path);
		rt_release(&t);
	}
	unsetenv("VIGIL_GROUP_MS");
	vg_buf_release(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_results_recorded),
		cmocka_unit_test(test_retry_then_succeed),
		cmocka_unit_test(test_retry_on_filter_and_scaling),
		cmocka_unit_test(test_denied_never_runs),
		cmocka_unit_test(test_resume_after_crash),
		cmocka_unit_test(test_refuses_live_owner),
		cmocka_unit_test(test_claim_once),
		cmocka_unit_test(test_cancel_by_signal),
		cmocka_unit_test(test_cancel_one_task),
		cmocka_unit_test(test_reset_failed),
		cmocka_unit_test(test_task_mismatch),
		cmocka_unit_test(test_cancel_orphan),
		cmocka_unit_test(test_group_commit_reports),
	};

	return cmocka_run_group_tests_name("run", tests, NULL, NULL);
}

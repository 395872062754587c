/*
 * test-local.c - the local backend through the backend API, on the real
 * kernel: exit codes and signals, output files, stdin, a clean
 * environment, exec failures, limits, signal forwarding, whole-tree kill
 * of setsid daemons that ignore SIGTERM, flat memory under heavy output,
 * the monitor wrappers and result records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "local-fixture.h"
#include "backends/sandbox.h"

static int
setup(void **state)
{
	*state = fx_new(VG_ISO_NONE);
	return 0;
}

static int
setup_standard(void **state)
{
	*state = fx_new(VG_ISO_STANDARD);
	return 0;
}

static int
teardown(void **state)
{
	fx_free(*state);
	return 0;
}

static void
test_exit_codes(void **state)
{
	struct fx *f = *state;

	fx_argv(f, "true", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_int_equal(f->r.exit_code, 0);
	assert_int_equal(f->r.signal, 0);

	fx_sh(f, "exit 3");
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 3);
	assert_string_equal(f->r.reason, "exit status 3");

	fx_sh(f, "kill -SEGV $$");
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, -1);
	assert_int_equal(f->r.signal, SIGSEGV);
	assert_non_null(strstr(f->r.reason, "killed by signal 11"));
	assert_true(f->r.ended >= f->r.started && f->r.started > 0);
}

static void
test_output_files(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char path[128];

	fx_sh(f, "echo out; echo err >&2; cat; echo $?");
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	/* stdin is /dev/null: cat ends at once with status 0. */
	assert_string_equal(fx_read(f, "stdout"), "out\n0\n");
	assert_string_equal(fx_read(f, "stderr"), "err\n");
	snprintf(path, sizeof(path), "%s/stdout", f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* A second attempt appends. */
	fx_sh(f, "echo again");
	assert_int_equal(fx_run(f), 0);
	assert_string_equal(fx_read(f, "stdout"), "out\n0\nagain\n");
}

static void
test_clean_env(void **state)
{
	struct fx *f = *state;
	char want[128];
	const char *out;

	setenv("VIGIL_TEST_SECRET", "hunter2", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "abc", 1);
	fx_env(f, "FOO", "bar baz");
	fx_sh(f, "env");
	assert_int_equal(fx_run(f), 0);
	out = fx_read(f, "stdout");
	assert_null(strstr(out, "hunter2"));
	assert_null(strstr(out, "AWS_SECRET"));
	assert_non_null(strstr(out, "\nFOO=bar baz\n"));
	assert_non_null(strstr(out, "\nVIGIL_RUN_ID=r1\n"));
	assert_non_null(strstr(out, "\nVIGIL_TASK_INDEX=3\n"));
	assert_non_null(strstr(out, "\nVIGIL_ATTEMPT=1\n"));
	snprintf(want, sizeof(want), "\nVIGIL_TASK_DIR=%s\n", f->dir);
	assert_non_null(strstr(out, want));
	assert_true(strncmp(out, "PATH=", 5) == 0 ||
	    strstr(out, "\nPATH=") != NULL);
	unsetenv("VIGIL_TEST_SECRET");
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

static void
test_exec_failure(void **state)
{
	struct fx *f = *state;
	char path[128], want[256];

	fx_argv(f, "/nonexistent/prog", "x", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 127);
	assert_string_equal(f->r.reason, "cannot execute '/nonexistent/prog': "
	    "No such file or directory");

	fx_argv(f, "no-such-command-vg", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.exit_code, 127);
	assert_string_equal(f->r.reason, "cannot execute 'no-such-command-vg': "
	    "No such file or directory");

	/* A directory on PATH is found, an unreadable entry is skipped. */
	fx_env(f, "PATH", "/nonexistent:/usr/bin:/bin");
	fx_argv(f, "sh", "-c", "exit 5", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.exit_code, 5);

	snprintf(path, sizeof(path), "%s/data", f->dir);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	fx_argv(f, path, (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.exit_code, 127);
	snprintf(want, sizeof(want), "cannot execute '%s': Permission denied",
	    path);
	assert_string_equal(f->r.reason, want);

	f->m.workdir = vg_xstrdup("/nonexistent-dir");
	fx_argv(f, "true", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.exit_code, 127);
	assert_string_equal(f->r.reason, "cannot change to directory "
	    "'/nonexistent-dir': No such file or directory");
	free(f->m.workdir);
	f->m.workdir = NULL;
}

static void
test_bad_attempts(void **state)
{
	struct fx *f = *state;

	fx_argv(f, (const char *)NULL);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e),
	    VG_EINVAL);
	assert_string_equal(f->e.msg, "task 3 has an empty command");

	fx_argv(f, "true", (const char *)NULL);
	f->a.task_dir = "/nonexistent/task";
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e),
	    VG_ENOENT);
	assert_string_equal(f->e.msg, "cannot open directory "
	    "'/nonexistent/task': No such file or directory");
	assert_int_equal(f->a.pid, 0);
	f->a.task_dir = f->dir;
}

static void
test_limits(void **state)
{
	struct fx *f = *state;
	const char *pre = getenv("LD_PRELOAD");

	/* valgrind virtualises RLIMIT_NOFILE in the processes it runs. */
	if (pre != NULL && strstr(pre, "vgpreload") != NULL) {
		printf("skipped: valgrind virtualises RLIMIT_NOFILE\n");
		skip();
	}

	f->m.limits.nofile = 77;
	f->m.limits.fsize = 4096;
	fx_sh(f, "ulimit -n; ulimit -c; ulimit -f");
	assert_int_equal(fx_run(f), 0);
	/* ulimit -f counts 512-byte blocks; core dumps off by default. */
	assert_string_equal(fx_read(f, "stdout"), "77\n0\n8\n");

	/* Over the hard limit without CAP_SYS_RESOURCE: a clear failure
	 * (root may raise it, so only check the message shape). */
	f->m.limits.nofile = 0;
	f->m.limits.fsize = 0;
	f->m.limits.core_set = 1;
	f->m.limits.core = 1024 * 1024;
	fx_sh(f, "ulimit -c");
	assert_int_equal(fx_run(f), 0);
	if (f->r.exit_code == 127)
		assert_string_equal(f->r.reason, "cannot start '/bin/sh': "
		    "setrlimit: Operation not permitted");
	else
		assert_string_equal(fx_read(f, "stdout"), "77\n0\n8\n2048\n");
}

/* Waits up to ms for a file of the task directory to be non-empty. */
static int
wait_file(struct fx *f, const char *name, int ms)
{
	for (; ms > 0; ms -= 10) {
		if (fx_read(f, name)[0] != '\0')
			return 1;
		usleep(10000);
	}
	return 0;
}

static void
test_sigterm_forwarded(void **state)
{
	struct fx *f = *state;
	int ws;

	fx_sh(f, "trap 'echo term; exit 42' TERM; echo up >&2; "
	    "while :; do sleep 0.05; done");
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	assert_true(wait_file(f, "stderr", 5000));
	assert_int_equal(vg_backend_cancel(&f->a, SIGTERM, &f->e), 0);
	assert_true(fx_wait_exit(f, 5000));
	assert_int_equal(waitpid(f->a.pid, &ws, 0), f->a.pid);
	assert_int_equal(vg_backend_finish(&f->a, ws, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 42);
	assert_string_equal(fx_read(f, "stdout"), "term\n");
}

/* A double-forked, setsid'd daemon that ignores SIGTERM, tagged with a
 * unique sleep argument so it can be found in /proc. */
static void
daemon_command(struct fx *f, char *marker, size_t size)
{
	char cmd[512];

	snprintf(marker, size, "3600.%d%d", (int)getpid(), rand() % 100000);
	snprintf(cmd, sizeof(cmd), "(setsid sh -c 'trap \"\" TERM; "
	    "sleep %s & echo up >&2; wait' &); sleep 3600", marker);
	fx_sh(f, cmd);
}

static void
test_tree_killed_on_timeout(void **state)
{
	struct fx *f = *state;
	char marker[64];
	long long t0;

	daemon_command(f, marker, sizeof(marker));
	f->a.timeout = 0.5;
	f->a.kill_grace = 0.3;
	t0 = vg_mono_ms();
	assert_int_equal(vg_backend_local.run(&f->a, &f->r, &f->e), 0);
	assert_int_equal(f->r.state, VG_ST_TIMEOUT);
	assert_string_equal(f->r.reason, "timed out");
	assert_true(vg_mono_ms() - t0 < 3000);
	assert_string_equal(fx_read(f, "stderr"), "up\n");
	assert_false(fx_marker_alive(marker));
}

/*
 * kill_grace 0 means SIGKILL at once: a task that ignores SIGTERM ends
 * at its timeout, not at a default grace (10 s) put in its place.
 */
static void
test_no_grace(void **state)
{
	struct fx *f = *state;
	long long t0;

	fx_sh(f, "trap '' TERM; echo up >&2; sleep 30");
	f->a.timeout = 0.5;
	f->a.kill_grace = 0;
	t0 = vg_mono_ms();
	assert_int_equal(vg_backend_local.run(&f->a, &f->r, &f->e), 0);
	assert_int_equal(f->r.state, VG_ST_TIMEOUT);
	assert_true(vg_mono_ms() - t0 < 5000);
	assert_string_equal(fx_read(f, "stderr"), "up\n");
}

static void
test_tree_killed_on_cancel(void **state)
{
	struct fx *f = *state;
	char marker[64];
	int ws, i;

	daemon_command(f, marker, sizeof(marker));
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	assert_true(f->a.pid > 0);
	assert_true(f->a.pidfd >= 0 || !fx_have_pidfd());
	assert_true(f->a.pid_start > 0);
	assert_true(wait_file(f, "stderr", 5000));
	for (i = 0; i < 200 && !fx_marker_alive(marker); i++)
		usleep(10000);
	assert_true(fx_marker_alive(marker));

	/* SIGTERM ends the task but not the daemon, which the shim then
	 * kills when the task is gone. */
	assert_int_equal(vg_backend_cancel(&f->a, SIGTERM, &f->e), 0);
	assert_true(fx_wait_exit(f, 5000));
	assert_int_equal(waitpid(f->a.pid, &ws, 0), f->a.pid);
	assert_int_equal(vg_backend_finish(&f->a, ws, &f->r, &f->e), 0);
	assert_int_equal(f->r.signal, SIGTERM);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->a.pidfd, -1);
	assert_false(fx_marker_alive(marker));
}

static void
test_sigkill_kills_tree(void **state)
{
	struct fx *f = *state;
	char marker[64];
	int ws, i;

	daemon_command(f, marker, sizeof(marker));
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	for (i = 0; i < 500 && !fx_marker_alive(marker); i++)
		usleep(10000);
	assert_true(fx_marker_alive(marker));
	assert_int_equal(vg_backend_cancel(&f->a, SIGKILL, &f->e), 0);
	assert_int_equal(waitpid(f->a.pid, &ws, 0), f->a.pid);
	assert_int_equal(vg_backend_finish(&f->a, ws, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.signal, SIGKILL);
	assert_false(fx_marker_alive(marker));
	/* Cancelling an ended attempt is harmless. */
	assert_int_equal(vg_backend_cancel(&f->a, SIGTERM, &f->e), 0);
}

/* Removes the task files of the last attempt and asks for an executor. */
static void
exec_fresh(struct fx *f)
{
	fx_unlink_output(f);
	f->a.reuse_ok = 1;
}

/* Runs f's command in a slot's executor (as the direct scheduler does)
 * and waits for its end; returns the executor's pid. */
static pid_t
exec_run(struct fx *f)
{
	exec_fresh(f);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	assert_true(f->a.watch_only);
	assert_true(fx_wait_exit(f, 10000));
	return f->a.pid;
}

/* Ends the attempt exec_run started. */
static void
exec_end(struct fx *f)
{
	assert_int_equal(vg_backend_finish(&f->a, 0, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->a.pidfd, -1);
}

/*
 * A slot's executor (backends/shim.h): tasks one after another in one
 * executor, each with its own stdio, status, usage and environment;
 * what a task leaves behind is killed before its end is reported; a
 * signal reaches only the task it was sent for; an executor killed from
 * outside ends its task as killed and is replaced.
 */
static void
test_slot_executor(void **state)
{
	struct fx *f = *state;
	struct vg_backend_drive *drive = NULL;
	char marker[64];
	pid_t x, y;
	int i;

	if (!vg_host_caps()->pidns || !vg_host_caps()->root) {
		printf("skipped: executors need PID namespaces as root\n");
		skip();
	}
	/* Executors only where a task cannot reach into one: where the
	 * kernel has no Landlock (valgrind hides it), ptrace denied. */
	if (vg_host_caps()->landlock_abi == 0 && !vg_host_caps()->seccomp) {
		printf("skipped: neither Landlock nor seccomp here, so no "
		    "executor (a task could reach into it)\n");
		skip();
	}
	f->m.isolation.ptrace = vg_xstrdup("deny");
	/* Executors are a drive's. */
	assert_int_equal(vg_backend_prepare(&vg_backend_local, &f->m, f->dir,
	    &drive, &f->e), 0);
	assert_non_null(drive);
	f->a.drive = drive;
	fx_sh(f, "echo one; echo $VIGIL_T >&2; exit 3");
	fx_env(f, "VIGIL_T", "env-one");
	x = exec_run(f);
	exec_end(f);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 3);
	assert_string_equal(fx_read(f, "stdout"), "one\n");
	assert_string_equal(fx_read(f, "stderr"), "env-one\n");
	assert_true(f->r.usage.known & VG_USAGE_CPU);

	/* The same executor; a daemon the task left is gone at its end. */
	daemon_command(f, marker, sizeof(marker));
	exec_fresh(f);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	assert_int_equal(f->a.pid, x);
	for (i = 0; i < 500 && !fx_marker_alive(marker); i++)
		usleep(10000);
	assert_true(fx_marker_alive(marker));
	assert_int_equal(vg_backend_cancel(&f->a, SIGKILL, &f->e), 0);
	assert_true(fx_wait_exit(f, 10000));
	exec_end(f);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.signal, SIGKILL);
	assert_false(fx_marker_alive(marker));
	/* A signal for the ended task is lost, not given to the next. */
	assert_int_equal(vg_backend_cancel(&f->a, SIGTERM, &f->e), 0);
	fx_sh(f, "sleep 0.2; echo two");
	assert_int_equal(exec_run(f), x);
	exec_end(f);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);

	/* SIGTERM reaches the task's trap. */
	fx_sh(f, "trap 'echo term; exit 42' TERM; echo up >&2; "
	    "while :; do sleep 0.05; done");
	exec_fresh(f);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	assert_true(wait_file(f, "stderr", 5000));
	assert_int_equal(vg_backend_cancel(&f->a, SIGTERM, &f->e), 0);
	assert_true(fx_wait_exit(f, 10000));
	exec_end(f);
	assert_int_equal(f->r.exit_code, 42);

	/* Killed from outside: the task ends killed, the next task gets a
	 * new executor. */
	fx_sh(f, "echo up >&2; sleep 30");
	exec_fresh(f);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e), 0);
	assert_true(wait_file(f, "stderr", 5000));
	assert_int_equal(kill(f->a.pid, SIGKILL), 0);
	assert_true(fx_wait_exit(f, 10000));
	exec_end(f);
	assert_int_equal(f->r.signal, SIGKILL);
	fx_sh(f, "exit 0");
	y = exec_run(f);
	exec_end(f);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_int_not_equal(y, x);

	/* A command that cannot be started, and the executor goes on. */
	fx_argv(f, "no-such-command-here", (const char *)NULL);
	assert_int_equal(exec_run(f), y);
	exec_end(f);
	assert_int_equal(f->r.exit_code, 127);
	assert_string_equal(f->r.reason, "cannot execute "
	    "'no-such-command-here': No such file or directory");
	fx_sh(f, "exit 0");
	assert_int_equal(exec_run(f), y);
	exec_end(f);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);

	/* The drive's end stops it. */
	vg_backend_unprepare(drive);
	f->a.drive = NULL;
	assert_int_equal(kill(y, 0), -1);
	f->a.reuse_ok = 0;
	free(f->m.isolation.ptrace);
	f->m.isolation.ptrace = NULL;
}

/* Resident set size of this process, in kB. */
static long
rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *fp = fopen("/proc/self/status", "r");

	while (fp != NULL && fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (fp != NULL)
		fclose(fp);
	return kb;
}

static void
test_big_output_flat_memory(void **state)
{
	struct fx *f = *state;
	char path[128];
	struct stat st;
	long before, after;

	before = rss_kb();
	fx_sh(f, "head -c 209715200 /dev/zero");
	assert_int_equal(fx_run(f), 0);
	after = rss_kb();
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	snprintf(path, sizeof(path), "%s/stdout", f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size == 209715200);
	/* The output never passes through this process. */
	assert_true(after - before < 2048);
}

static void
test_standard_tmpdir(void **state)
{
	struct fx *f = *state;
	char want[128];

	fx_probe(f, "tmpdir", NULL);
	assert_int_equal(fx_run(f), 0);
	snprintf(want, sizeof(want), "%s/tmp\n", f->dir);
	assert_string_equal(fx_read(f, "stdout"), want);
	/* cleanup removed the private temp directory */
	snprintf(want, sizeof(want), "%s/tmp", f->dir);
	assert_int_equal(access(want, F_OK), -1);
}

static void
test_argv_env_builders(void **state)
{
	struct fx *f = *state;
	struct vg_strv v = VG_STRV_INIT;

	fx_sh(f, "echo 'a b'");
	vg_attempt_argv(&f->a, &v);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.v[0], "/bin/sh");
	assert_string_equal(v.v[1], "-c");
	assert_string_equal(v.v[2], "echo 'a b'");
	assert_null(v.v[3]);
	vg_strv_release(&v);

	fx_argv(f, "prog", "a b", "", (const char *)NULL);
	vg_attempt_argv(&f->a, &v);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.v[1], "a b");
	assert_string_equal(v.v[2], "");
	vg_strv_release(&v);

	f->a.scratch_dir = "/scratch/x";
	vg_attempt_env(&f->a, &v);
	assert_string_equal(v.v[v.n - 1], "CUDA_VISIBLE_DEVICES=");
	assert_string_equal(v.v[v.n - 2], "VIGIL_SCRATCH_DIR=/scratch/x");
	assert_string_equal(v.v[v.n - 3], "VIGIL_ATTEMPT=1");
	vg_strv_release(&v);
	f->a.scratch_dir = NULL;
}

/* ---- monitor-based backends ---- */

static int fake_mode;

/* run() of a fake synchronous backend. */
static int
fake_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	switch (fake_mode) {
	case 0:
		r->state = VG_ST_FAILED;
		r->exit_code = 4;
		snprintf(r->node, sizeof(r->node), "node-\"1\"");
		snprintf(r->reason, sizeof(r->reason), "line1\nline2 \\ é");
		r->ended = r->started + 1;
		return 0;
	case 1:
		return vg_err_set(e, VG_EBACKEND, "cannot reach 'sandbox-7'");
	case 2:
		pause();
		return 0;
	default:
		_exit(9);
	}
}

static const struct vg_backend_ops fake_ops = {
	.p = { .kind = VG_PLUGIN_BACKEND, .name = "fake" },
	.run = fake_run,
};

/* Starts the fake backend, optionally cancels, then waits and
 * finishes. */
static void
fake_attempt(struct fx *f, int mode, int cancel_sig)
{
	int ws;

	fake_mode = mode;
	memset(&f->r, 0, sizeof(f->r));
	assert_int_equal(vg_backend_start(&fake_ops, &f->a, &f->e), 0);
	assert_true(f->a.pid > 0);
	assert_true(f->a.pidfd >= 0 || !fx_have_pidfd());
	if (cancel_sig) {
		usleep(50000);
		assert_int_equal(vg_backend_cancel(&f->a, cancel_sig, &f->e),
		    0);
	}
	assert_int_equal(waitpid(f->a.pid, &ws, 0), f->a.pid);
	assert_int_equal(vg_backend_finish(&f->a, ws, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
}

static void
test_monitor(void **state)
{
	struct fx *f = *state;
	char want[256];

	fake_attempt(f, 0, 0);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 4);
	assert_string_equal(f->r.node, "node-\"1\"");
	assert_string_equal(f->r.reason, "line1\nline2 \\ é");
	assert_true(f->r.ended - f->r.started > 0.99);

	fake_attempt(f, 1, 0);
	assert_int_equal(f->r.state, VG_ST_BACKEND_ERROR);
	assert_string_equal(f->r.reason, "cannot reach 'sandbox-7'");

	fake_attempt(f, 2, SIGTERM);
	assert_int_equal(f->r.state, VG_ST_BACKEND_ERROR);
	assert_string_equal(f->r.reason, "monitor of backend 'fake' killed by "
	    "signal 15 (Terminated) without a result");

	fake_attempt(f, 3, 0);
	assert_int_equal(f->r.state, VG_ST_BACKEND_ERROR);
	snprintf(want, sizeof(want), "monitor of backend 'fake' exited with "
	    "status 9 without a result: '%s/result.json' does not exist",
	    f->dir);
	assert_string_equal(f->r.reason, want);
}

static void
test_result_records(void **state)
{
	struct fx *f = *state;
	struct vg_result r, w;
	struct vg_err e;
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "", "'result': not a result record: json: byte 0: "
		    "unexpected end of input, expected a value" },
		{ "{}", "'result': no \"state\" member" },
		{ "{\"state\": \"RUNNING\"}",
		    "'result': state 'RUNNING' is not terminal" },
		{ "{\"state\": \"NOPE\"}", "'result': unknown state 'NOPE'" },
		{ "{\"state\": \"FAILED\", \"exit_code\": 1.5}",
		    "'result': bad value for \"exit_code\"" },
		{ "{\"state\": \"FAILED\", \"exit_code\": \"1\"}",
		    "'result': bad value for \"exit_code\"" },
		{ "{\"state\": \"FAILED\", \"signal\": -1}",
		    "'result': bad value for \"signal\"" },
		{ "{\"state\": \"FAILED\", \"node\": 3}",
		    "'result': bad value for \"node\"" },
		{ "{\"state\": \"FAILED\",}",
		    "'result': not a result record: json: byte 19: "
		    "expected a string key" },
		{ "{\"state\": \"FAILED\"} x",
		    "'result': not a result record: json: byte 20: "
		    "unexpected data after the JSON value" },
		{ "{\"state\": \"FAI\\u00zz\"}",
		    "'result': not a result record: json: byte 14: "
		    "\\u must be followed by four hex digits" },
		{ "{\"state\": \"FAILED\", \"max_rss\": -1}",
		    "'result': bad value for \"max_rss\"" },
		{ "{\"state\": \"FAILED\", \"max_rss\": 1.5}",
		    "'result': bad value for \"max_rss\"" },
		{ "{\"state\": \"FAILED\", \"cpu_user\": 1}",
		    "'result': bad value for \"cpu_sys\"" },
		{ "{\"state\": \"FAILED\", \"cpu_user\": \"1\", "
		    "\"cpu_sys\": 1}", "'result': bad value for \"cpu_user\"" },
		{ "{\"state\": \"FAILED\", \"cpus\": 1e7}",
		    "'result': bad value for \"cpus\"" },
		{ "{\"started\": 1e999, \"state\": \"FAILED\"}",
		    "'result': not a result record: json: byte 12: "
		    "number out of range of a double" },
		{ "{\"state\": \"BACKEND_ERROR\", \"cause\": \"maybe\"}",
		    "'result': bad value for \"cause\"" },
		{ "{\"state\": \"BACKEND_ERROR\", \"cause\": 1}",
		    "'result': bad value for \"cause\"" },
		{ "{\"state\": \"FAILED\", \"attempt\": -2}",
		    "'result': bad value for \"attempt\"" },
		{ "{\"state\": \"FAILED\", \"attempt\": 1.5}",
		    "'result': bad value for \"attempt\"" },
	};
	size_t i;

	memset(&w, 0, sizeof(w));
	w.state = VG_ST_OOM;
	w.exit_code = -1;
	w.signal = 9;
	w.started = 1700000000.25;
	w.ended = 1700000001.5;
	snprintf(w.reason, sizeof(w.reason), "tab\there \x01");
	vg_err_init(&e);
	assert_int_equal(vg_result_write(f->dir, &w, &e), 0);
	assert_int_equal(vg_result_read(f->dir, &r, &e), 0);
	assert_int_equal(r.state, VG_ST_OOM);
	assert_int_equal(r.signal, 9);
	assert_int_equal(r.exit_code, -1);
	assert_true(r.started == 1700000000.25 && r.ended == 1700000001.5);
	assert_string_equal(r.reason, "tab\there \x01");
	assert_string_equal(fx_read(f, "result.json"),
	    "{\n\"state\": \"OOM\",\n"
	    "\"exit_code\": -1,\n\"signal\": 9,\n\"started\": "
	    "1700000000.250000,\n\"ended\": 1700000001.500000,\n\"node\": "
	    "\"\",\n\"reason\": \"tab\\there \\u0001\",\n\"cpu_user\": null,\n"
	    "\"cpu_sys\": null,\n\"max_rss\": null,\n\"cpus\": null,\n"
	    "\"gpus\": null,\n\"mem_limit\": null,\n\"cause\": null\n}\n");
	assert_int_equal(r.usage.known, 0);
	/* Usage round-trips; what is unknown stays unknown. */
	w.usage.known = VG_USAGE_CPU | VG_USAGE_RSS | VG_USAGE_MEM;
	w.usage.cpu_user = 1.25;
	w.usage.cpu_sys = 0.5;
	w.usage.max_rss = 209715200;
	w.cause = VG_CAUSE_TRANSIENT;
	w.attempt = 3;
	w.usage.mem_limit = 1LL << 40;
	assert_int_equal(vg_result_write(f->dir, &w, &e), 0);
	assert_int_equal(vg_result_read(f->dir, &r, &e), 0);
	assert_int_equal(r.usage.known, w.usage.known);
	assert_true(r.usage.cpu_user == 1.25 && r.usage.cpu_sys == 0.5);
	assert_int_equal(r.usage.max_rss, 209715200);
	assert_int_equal(r.usage.mem_limit, 1LL << 40);
	assert_int_equal(r.cause, VG_CAUSE_TRANSIENT);
	assert_int_equal(r.attempt, 3);
	assert_non_null(strstr(fx_read(f, "result.json"),
	    "\"cause\": \"transient\",\n\"attempt\": 3\n}"));
	w.cause = VG_CAUSE_PERMANENT;
	assert_int_equal(vg_result_write(f->dir, &w, &e), 0);
	assert_int_equal(vg_result_read(f->dir, &r, &e), 0);
	assert_int_equal(r.cause, VG_CAUSE_PERMANENT);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vg_err_init(&e);
		assert_int_equal(vg_result_parse(bad[i].text,
		    strlen(bad[i].text), &r, &e), VG_EPARSE);
		assert_string_equal(e.msg, bad[i].err);
	}
	/* Unknown members are skipped; a long reason is cut. */
	{
		const char *ok = "{\"x\": null, \"state\": \"SUCCEEDED\", "
		    "\"y\": true}";

		assert_int_equal(vg_result_parse(ok, strlen(ok), &r, &e), 0);
	}
	assert_int_equal(r.state, VG_ST_SUCCEEDED);

	assert_int_equal(vg_result_read("/nonexistent", &r, &e), VG_ENOENT);
}

/*
 * A task of a run (RUN/tasks/I) takes its TMPDIR from the run's pool
 * (RUN/tmp/PID.N).  The last vigil process of a run to leave removes
 * RUN/tmp when it is empty, while task-exec processes of the same Slurm
 * array on the node come and go: a slot's parent may be gone when the
 * next task starts.  The task still starts, and its TMPDIR is there.
 */
static void
test_tmp_pool_parent_gone(void **state)
{
	struct fx *f = *state;
	char task[128], run_tmp[128];
	const char *keep = f->a.task_dir;

	snprintf(task, sizeof(task), "%s/run/tasks", f->dir);
	assert_int_equal(vg_mkdir_p(task, 0700, &f->e), 0);
	snprintf(task, sizeof(task), "%s/run/tasks/0", f->dir);
	assert_int_equal(mkdir(task, 0700), 0);
	snprintf(run_tmp, sizeof(run_tmp), "%s/run/tmp", f->dir);
	f->a.task_dir = task;
	fx_sh(f, "test -d \"$TMPDIR\" && touch \"$TMPDIR/x\"");
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	/* As a sibling process leaving would. */
	assert_int_equal(vg_rm_rf(run_tmp, NULL), 0);
	assert_int_equal(fx_run(f), 0);
	assert_string_equal(f->r.reason, "");
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	f->a.task_dir = keep;
}

/* Counts the regular files in dir; *nonempty those with content, *inos
 * (up to 8) their inode numbers. */
static int
pool_files(const char *dir, int *nonempty, ino_t *inos)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int n = 0;

	*nonempty = 0;
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_size > 0)
			(*nonempty)++;
		if (inos != NULL && n < 8)
			inos[n] = st.st_ino;
		n++;
	}
	closedir(d);
	return n;
}

/* Writes text into every regular file of dir (a pooled file written
 * after it was pooled, as a leaked descriptor would). */
static void
pool_spoil(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int fd;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), de->d_name, O_WRONLY | O_APPEND);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "junk\n", 5), 5);
		close(fd);
	}
	closedir(d);
}

/*
 * A task of a run keeps its empty stdout and stderr in the run's pool of
 * output files (RUN/tmp/PID.oN) and the next task's are taken from it
 * instead of created; a pooled file that is not empty is removed, not
 * used; an earlier attempt's output is never replaced; a dead process's
 * pooled files are removed; the pool is the drive's and goes with it.
 */
static void
test_output_pool(void **state)
{
	struct fx *f = *state;
	char task[128], run_tmp[128], path[160];
	ino_t inos[8];
	struct stat st;
	int n, bad, fd;

	snprintf(task, sizeof(task), "%s/run/tasks/0", f->dir);
	assert_int_equal(vg_mkdir_p(task, 0700, &f->e), 0);
	snprintf(run_tmp, sizeof(run_tmp), "%s/run/tmp", f->dir);
	f->a.task_dir = task;
	assert_int_equal(vg_backend_prepare(&vg_backend_local, &f->m, f->dir,
	    &f->a.drive, &f->e), 0);
	fx_sh(f, "true");
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	/* both empty files pooled, none left in the task directory */
	snprintf(path, sizeof(path), "%s/stdout", task);
	assert_int_not_equal(lstat(path, &st), 0);
	assert_int_equal(pool_files(run_tmp, &bad, inos), 2);
	assert_int_equal(bad, 0);

	/* the next task's stdout is a pooled file, mode 0600, appended */
	snprintf(task, sizeof(task), "%s/run/tasks/1", f->dir);
	assert_int_equal(mkdir(task, 0700), 0);
	fx_sh(f, "echo hi");
	assert_int_equal(fx_run(f), 0);
	snprintf(path, sizeof(path), "%s/stdout", task);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(st.st_ino == inos[0] || st.st_ino == inos[1]);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* its stderr went back to the pool */
	assert_int_equal(pool_files(run_tmp, &bad, NULL), 1);
	/* a second attempt appends to its own output, never replaced */
	fx_sh(f, "echo again");
	assert_int_equal(fx_run(f), 0);
	assert_string_equal(fx_read(f, "run/tasks/1/stdout"), "hi\nagain\n");

	/* a pooled file with content is refused (removed) */
	pool_spoil(run_tmp);
	snprintf(task, sizeof(task), "%s/run/tasks/2", f->dir);
	assert_int_equal(mkdir(task, 0700), 0);
	fx_sh(f, "echo x; echo y >&2");
	assert_int_equal(fx_run(f), 0);
	assert_string_equal(fx_read(f, "run/tasks/2/stdout"), "x\n");
	n = pool_files(run_tmp, &bad, NULL);
	assert_int_equal(bad, 0);
	assert_int_equal(n, 0);

	/* the pool goes with the drive; a dead process's files with the
	 * next one to pool in the run */
	vg_backend_unprepare(f->a.drive);
	assert_int_not_equal(lstat(run_tmp, &st), 0);
	assert_int_equal(vg_backend_prepare(&vg_backend_local, &f->m, f->dir,
	    &f->a.drive, &f->e), 0);
	assert_int_equal(mkdir(run_tmp, 0700), 0);
	snprintf(path, sizeof(path), "%s/999999999.o3", run_tmp);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
	close(fd);
	snprintf(task, sizeof(task), "%s/run/tasks/0", f->dir);
	fx_sh(f, "true");
	assert_int_equal(fx_run(f), 0);
	assert_int_not_equal(lstat(path, &st), 0);
	assert_int_equal(pool_files(run_tmp, &bad, NULL), 2);
	vg_backend_unprepare(f->a.drive);
	f->a.drive = NULL;
	assert_int_not_equal(lstat(run_tmp, &st), 0);
	f->a.task_dir = f->dir;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tmp_pool_parent_gone,
		    setup_standard, teardown),
		cmocka_unit_test_setup_teardown(test_output_pool, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exit_codes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_output_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_clean_env, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exec_failure, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bad_attempts, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_forwarded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tree_killed_on_timeout,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_grace, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tree_killed_on_cancel,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_kills_tree, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_big_output_flat_memory,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_executor,
		    setup_standard, teardown),
		cmocka_unit_test_setup_teardown(test_standard_tmpdir,
		    setup_standard, teardown),
		cmocka_unit_test_setup_teardown(test_argv_env_builders, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_monitor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_records, setup,
		    teardown),
	};
	int rc;

	if (argc > 2 && strcmp(argv[1], "--probe") == 0)
		return fx_probe_main(argc, argv);
	srand((unsigned)getpid());
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	vg_local_reset();
	return rc;
}

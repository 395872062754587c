/*
 * test-local-proc.c - the local backend's process start for other
 * backends (vg_local_proc_*): a caller's argv and environment, output
 * files, the task's own wait status, exec failures, the whole-tree kill,
 * and that VG_LOCAL_TREE_ONLY leaves mount(2) and /proc usable (what
 * apptainer needs) while VG_LOCAL_ISOLATION confines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "local-fixture.h"

/* Starts argv with envp and how, waits like a scheduler, finishes. */
static int
proc_run(struct fx *f, char *const argv[], char *const envp[],
    enum vg_local_confine how, int *task_ws)
{
	struct vg_local_proc *lp = NULL;
	struct pollfd pfd;
	int rc, ws;

	vg_err_init(&f->e);
	memset(&f->r, 0, sizeof(f->r));
	rc = vg_local_proc_start(&f->a, argv, envp, how, &lp, &f->e);
	if (rc != 0)
		return rc;
	pfd.fd = f->a.pidfd;
	pfd.events = POLLIN;
	while (f->a.pidfd >= 0 && poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	if (waitpid(f->a.pid, &ws, 0) != f->a.pid)
		abort();
	rc = vg_local_proc_finish(&f->a, lp, ws, &f->r, task_ws);
	vg_local_proc_free(lp);
	if (f->a.pidfd >= 0)
		close(f->a.pidfd);
	f->a.pidfd = -1;
	return rc;
}

/* Fills v from a NULL-terminated list of strings. */
static char **
strv(struct vg_strv *v, const char *s0, ...)
{
	const char *s;
	va_list ap;

	va_start(ap, s0);
	for (s = s0; s != NULL; s = va_arg(ap, const char *))
		vg_strv_push(v, s);
	va_end(ap);
	return v->v;
}

static int
setup(void **state)
{
	*state = fx_new(VG_ISO_STANDARD);
	return 0;
}

static int
teardown(void **state)
{
	fx_free(*state);
	vg_local_reset();
	return 0;
}

/* The caller's argv and environment, the exit code and the output. */
static void
test_argv_env_exit(void **state)
{
	struct fx *f = *state;
	struct vg_strv av = VG_STRV_INIT, ev = VG_STRV_INIT;
	int ws = -2;

	strv(&av, "/bin/sh", "-c", "echo \"$ONLY\"; echo e >&2; exit 7",
	    (const char *)NULL);
	strv(&ev, "ONLY=caller", "PATH=/usr/bin:/bin", (const char *)NULL);
	assert_int_equal(proc_run(f, av.v, ev.v, VG_LOCAL_TREE_ONLY, &ws), 0);
	vg_strv_release(&av);
	vg_strv_release(&ev);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 7);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 7);
	assert_string_equal(fx_read(f, "stdout"), "caller\n");
	assert_string_equal(fx_read(f, "stderr"), "e\n");
}

/* A name is looked up in the PATH of the given environment. */
static void
test_path_lookup(void **state)
{
	struct fx *f = *state;
	struct vg_strv av = VG_STRV_INIT, ev = VG_STRV_INIT;
	int ws = -2;

	strv(&av, "sh", "-c", "exit 0", (const char *)NULL);
	strv(&ev, "PATH=/nonexistent:/bin", (const char *)NULL);
	assert_int_equal(proc_run(f, av.v, ev.v, VG_LOCAL_TREE_ONLY, &ws), 0);
	vg_strv_release(&av);
	vg_strv_release(&ev);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_int_equal(ws, 0);
}

/* A program that cannot be executed never ran: task_ws is -1. */
static void
test_exec_failure(void **state)
{
	struct fx *f = *state;
	struct vg_strv av = VG_STRV_INIT;
	char *envp[1] = { NULL };
	int ws = 0;

	strv(&av, "/nonexistent/apptainer", "exec", (const char *)NULL);
	assert_int_equal(proc_run(f, av.v, envp, VG_LOCAL_TREE_ONLY, &ws), 0);
	vg_strv_release(&av);
	assert_int_equal(ws, -1);
	assert_int_equal(f->r.exit_code, 127);
	assert_string_equal(f->r.reason, "cannot execute "
	    "'/nonexistent/apptainer': No such file or directory");
}

/* TREE_ONLY: mount(2) is allowed and /proc is the task's own PID
 * namespace's (as root), so /proc/<getpid()> is the process itself;
 * ISOLATION refuses mount(2). */
static void
test_tree_only_unconfined(void **state)
{
	struct fx *f = *state;
	struct vg_strv av = VG_STRV_INIT;
	char want[300], path[128], *sh;
	int ws;

	/* $$ in a PID namespace is small; /proc/$$/exe must be this sh. */
	strv(&av, "/bin/sh", "-c", "readlink /proc/$$/exe; exec \"$0\" "
	    "--probe mount \"$1\"", f->self, f->dir, (const char *)NULL);
	assert_int_equal(proc_run(f, av.v, NULL, VG_LOCAL_TREE_ONLY, &ws), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	sh = realpath("/bin/sh", NULL);
	assert_non_null(sh);
	snprintf(want, sizeof(want), "%s\nok\n", sh);
	free(sh);
	if (geteuid() == 0)
		assert_string_equal(fx_read(f, "stdout"), want);
	(void)umount2(f->dir, MNT_DETACH);

	snprintf(path, sizeof(path), "%s/stdout", f->dir);
	(void)unlink(path);
	vg_strv_release(&av);
	strv(&av, f->self, "--probe", "mount", f->dir, (const char *)NULL);
	assert_int_equal(proc_run(f, av.v, NULL, VG_LOCAL_ISOLATION, &ws), 0);
	vg_strv_release(&av);
	if (*vg_local_downgrades(&f->m, &f->e) == '\0')
		assert_string_equal(fx_read(f, "stdout"), "EPERM\n");
}

/* SIGKILL through vg_local_proc_signal ends the whole tree, including a
 * child in a session of its own. */
static void
test_tree_kill(void **state)
{
	struct fx *f = *state;
	struct vg_local_proc *lp = NULL;
	struct vg_strv av = VG_STRV_INIT;
	char marker[64], cmd[256];
	int ws, i, task_ws;

	snprintf(marker, sizeof(marker), "sleep 3%d7", (int)getpid() % 1000);
	snprintf(cmd, sizeof(cmd), "setsid %s & %s", marker, marker);
	strv(&av, "/bin/sh", "-c", cmd, (const char *)NULL);
	assert_int_equal(vg_local_proc_start(&f->a, av.v, NULL,
	    VG_LOCAL_TREE_ONLY, &lp, &f->e), 0);
	vg_strv_release(&av);
	for (i = 0; i < 200 && !fx_marker_alive(marker); i++)
		usleep(10000);
	usleep(100000);
	assert_true(fx_marker_alive(marker));
	assert_int_equal(vg_local_proc_signal(&f->a, lp, SIGKILL, &f->e), 0);
	assert_int_equal(waitpid(f->a.pid, &ws, 0), f->a.pid);
	assert_int_equal(vg_local_proc_finish(&f->a, lp, ws, &f->r, &task_ws),
	    0);
	assert_true(task_ws >= 0 && WIFSIGNALED(task_ws));
	assert_int_equal(WTERMSIG(task_ws), SIGKILL);
	for (i = 0; i < 100 && fx_marker_alive(marker); i++)
		usleep(10000);
	assert_false(fx_marker_alive(marker));
	vg_local_proc_free(lp);
	if (f->a.pidfd >= 0)
		close(f->a.pidfd);
	f->a.pidfd = -1;
}

/* vg_local_proc_wait enforces the timeout: SIGTERM, then SIGKILL. */
static void
test_wait_timeout(void **state)
{
	struct fx *f = *state;
	struct vg_local_proc *lp = NULL;
	struct vg_strv av = VG_STRV_INIT;
	int ws = 0, why = 0, task_ws;
	long long t0;

	f->a.timeout = 0.3;
	f->a.kill_grace = 0.3;
	t0 = vg_mono_ms();
	strv(&av, "/bin/sh", "-c", "trap '' TERM; sleep 20",
	    (const char *)NULL);
	assert_int_equal(vg_local_proc_start(&f->a, av.v, NULL,
	    VG_LOCAL_TREE_ONLY, &lp, &f->e), 0);
	vg_strv_release(&av);
	assert_int_equal(vg_local_proc_wait(&f->a, lp, &ws, &why, &f->e), 0);
	assert_int_equal(why, VG_ST_TIMEOUT);
	assert_true(vg_mono_ms() - t0 < 5000);
	assert_int_equal(vg_local_proc_finish(&f->a, lp, ws, &f->r, &task_ws),
	    0);
	assert_true(task_ws >= 0 && WIFSIGNALED(task_ws));
	vg_local_proc_free(lp);
	if (f->a.pidfd >= 0)
		close(f->a.pidfd);
	f->a.pidfd = -1;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv_env_exit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_path_lookup, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exec_failure, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tree_only_unconfined,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_kill, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_wait_timeout, setup,
		    teardown),
	};

	if (argc > 2 && strcmp(argv[1], "--probe") == 0)
		return fx_probe_main(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

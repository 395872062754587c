/*
 * test-backend-drive.c - a backend's per-drive state (backend.h, struct
 * vg_backend_drive), on the local backend and the real kernel: two
 * drives in one process keep apart (executors, temporary directory
 * slots), a drive's end removes what it kept, an attempt that outlives
 * its drive's unprepare still ends and is cleaned up, an attempt outside
 * a drive keeps nothing past its cleanup, a handle of another backend is
 * never taken for local's, and a failed prepare leaves no handle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "local-fixture.h"
#include "backends/sandbox.h"

/* A fixture whose task directory is RUN/tasks/3 (where the drive pools
 * temporary directories, RUN/tmp/PID.K), RUN being the fixture's
 * directory. */
struct dfx {
	struct fx	*f;
	char		 task_dir[192];
	char		 tmp[192];	/* RUN/tmp */
};

static int
setup(void **state)
{
	struct dfx *d = vg_xcalloc(1, sizeof(*d));
	char path[128];

	d->f = fx_new(VG_ISO_STANDARD);
	snprintf(path, sizeof(path), "%s/tasks", d->f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(d->task_dir, sizeof(d->task_dir), "%s/3", path);
	assert_int_equal(mkdir(d->task_dir, 0700), 0);
	snprintf(d->tmp, sizeof(d->tmp), "%s/tmp", d->f->dir);
	d->f->a.task_dir = d->task_dir;
	*state = d;
	return 0;
}

static int
teardown(void **state)
{
	struct dfx *d = *state;

	free(d->f->m.isolation.ptrace);
	fx_free(d->f);
	free(d);
	return 0;
}

/* The first line of the task's stdout, in a static buffer. */
static const char *
out_line(const struct dfx *d)
{
	static char line[256];
	char path[256];
	FILE *fp;

	line[0] = '\0';
	snprintf(path, sizeof(path), "%s/stdout", d->task_dir);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line), fp) == NULL)
			line[0] = '\0';
		fclose(fp);
	}
	line[strcspn(line, "\n")] = '\0';
	return line;
}

/* True when path exists. */
static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Removes the task's stdout and stderr (the next attempt appends). */
static void
fresh_output(struct dfx *d)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/stdout", d->task_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stderr", d->task_dir);
	unlink(path);
}

/* Prepares a local drive for d's manifest. */
static struct vg_backend_drive *
drive_new(struct dfx *d)
{
	struct vg_backend_drive *drive = (struct vg_backend_drive *)1;

	vg_err_init(&d->f->e);
	assert_int_equal(vg_backend_prepare(&vg_backend_local, &d->f->m,
	    d->f->dir, &drive, &d->f->e), 0);
	assert_non_null(drive);
	assert_ptr_equal(drive->ops, &vg_backend_local);
	return drive;
}

/*
 * The temporary directory slots are the drive's: its attempts share
 * RUN/tmp/PID.K from one to the next, and its end removes them; an
 * attempt outside a drive gets one that goes with its cleanup.
 */
static void
test_tmp_slots_per_drive(void **state)
{
	struct dfx *d = *state;
	struct fx *f = d->f;
	struct vg_backend_drive *drive;
	char first[256];

	/* Outside a drive: nothing of the attempt's is left. */
	fx_sh(f, "echo \"$TMPDIR\"");
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_non_null(strstr(out_line(d), "/tmp/"));
	assert_false(exists(d->tmp));

	drive = drive_new(d);
	f->a.drive = drive;
	fresh_output(d);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	snprintf(first, sizeof(first), "%s", out_line(d));
	assert_int_equal(strncmp(first, d->tmp, strlen(d->tmp)), 0);
	/* Kept for the drive's next attempt, which gets the same one. */
	assert_true(exists(first));
	fresh_output(d);
	assert_int_equal(fx_run(f), 0);
	assert_string_equal(out_line(d), first);

	vg_backend_unprepare(drive);
	f->a.drive = NULL;
	assert_false(exists(first));
	assert_false(exists(d->tmp));
}

/* An attempt still running when its drive is unprepared holds what it
 * uses: it ends, is finished and cleaned up as usual, and the drive's
 * state goes with it. */
static void
test_attempt_outlives_unprepare(void **state)
{
	struct dfx *d = *state;
	struct fx *f = d->f;
	struct pollfd pfd;
	int ws;

	f->a.drive = drive_new(d);
	fx_sh(f, "sleep 0.2; echo \"done $TMPDIR\"");
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e),
	    0);
	vg_backend_unprepare(f->a.drive);
	f->a.drive = NULL;
	pfd.fd = f->a.pidfd;
	pfd.events = POLLIN;
	while (f->a.pidfd >= 0 && poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	assert_int_equal(waitpid(f->a.pid, &ws, 0), f->a.pid);
	assert_int_equal(vg_backend_finish(&f->a, ws, &f->r, &f->e), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_int_equal(strncmp(out_line(d), "done ", 5), 0);
	assert_true(exists(d->tmp));
	vg_backend_cleanup(&f->a);
	assert_false(exists(d->tmp));
}

/*
 * Two drives in one process keep apart: each has its slots' executors
 * (an attempt of one never runs in the other's), and the end of one
 * stops its executors only.
 */
static void
test_two_drives_apart(void **state)
{
	struct dfx *d = *state;
	struct fx *f = d->f;
	struct vg_backend_drive *one, *two;
	pid_t x1, x2;

	if (!vg_host_caps()->pidns || !vg_host_caps()->root) {
		printf("skipped: executors need PID namespaces as root\n");
		skip();
	}
	if (vg_host_caps()->landlock_abi == 0 && !vg_host_caps()->seccomp) {
		printf("skipped: neither Landlock nor seccomp here, so no "
		    "executor (a task could reach into it)\n");
		skip();
	}
	f->m.isolation.ptrace = vg_xstrdup("deny");
	one = drive_new(d);
	two = drive_new(d);
	assert_ptr_not_equal(one, two);
	fx_sh(f, "echo \"$VIGIL_ATTEMPT\"");

	f->a.reuse_ok = 1;
	f->a.drive = one;
	fresh_output(d);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e),
	    0);
	assert_true(f->a.watch_only);
	x1 = f->a.pid;
	assert_true(fx_wait_exit(f, 10000));
	assert_int_equal(vg_backend_finish(&f->a, 0, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);

	f->a.drive = two;
	fresh_output(d);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e),
	    0);
	assert_true(f->a.watch_only);
	x2 = f->a.pid;
	assert_int_not_equal(x1, x2);
	assert_true(fx_wait_exit(f, 10000));
	assert_int_equal(vg_backend_finish(&f->a, 0, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_string_equal(out_line(d), "1");

	/* The end of one stops its executor, not the other's, which
	 * takes the next attempt of its drive. */
	vg_backend_unprepare(one);
	assert_int_equal(kill(x1, 0), -1);
	assert_int_equal(kill(x2, 0), 0);
	fresh_output(d);
	assert_int_equal(vg_backend_start(&vg_backend_local, &f->a, &f->e),
	    0);
	assert_int_equal(f->a.pid, x2);
	assert_true(fx_wait_exit(f, 10000));
	assert_int_equal(vg_backend_finish(&f->a, 0, &f->r, &f->e), 0);
	vg_backend_cleanup(&f->a);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	vg_backend_unprepare(two);
	assert_int_equal(kill(x2, 0), -1);
	f->a.drive = NULL;
	f->a.reuse_ok = 0;
}

/* Outside a drive, or with a handle that is not local's, there is no
 * executor to keep: the attempt runs in a shim of its own, which the
 * caller waits for. */
static void
test_no_drive_no_executor(void **state)
{
	struct dfx *d = *state;
	struct fx *f = d->f;
	struct vg_backend_drive other = { .ops = &vg_backend_docker };

	f->m.isolation.ptrace = vg_xstrdup("deny");
	fx_sh(f, "echo ran");
	f->a.reuse_ok = 1;
	assert_int_equal(fx_run(f), 0);
	assert_false(f->a.watch_only);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	f->a.drive = &other;
	fresh_output(d);
	assert_int_equal(fx_run(f), 0);
	assert_false(f->a.watch_only);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	assert_string_equal(out_line(d), "ran");
	assert_false(exists(d->tmp));
	f->a.drive = NULL;
	f->a.reuse_ok = 0;
}

/* The wrappers: a backend without prepare gives no handle; unprepare
 * of none does nothing; a failed prepare leaves no handle. */
static void
test_prepare_wrappers(void **state)
{
	struct dfx *d = *state;
	struct fx *f = d->f;
	struct vg_backend_drive *drive = (struct vg_backend_drive *)1;

	assert_null(vg_backend_ssh.prepare);
	assert_int_equal(vg_backend_prepare(&vg_backend_ssh, &f->m, f->dir,
	    &drive, &f->e), 0);
	assert_null(drive);
	vg_backend_unprepare(NULL);

	/* A relative socket path is refused by the sandbox's compiler. */
	vg_strv_push(&f->m.isolation.sockets, "relative.sock");
	drive = (struct vg_backend_drive *)1;
	vg_err_init(&f->e);
	assert_int_not_equal(vg_backend_prepare(&vg_backend_local, &f->m,
	    f->dir, &drive, &f->e), 0);
	assert_null(drive);
	assert_non_null(strstr(f->e.msg, "relative.sock"));
	vg_strv_release(&f->m.isolation.sockets);
	memset(&f->m.isolation.sockets, 0, sizeof(f->m.isolation.sockets));
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tmp_slots_per_drive,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_attempt_outlives_unprepare,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_drives_apart, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_drive_no_executor,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_wrappers, setup,
		    teardown),
	};
	int rc;

	if (argc > 2 && strcmp(argv[1], "--probe") == 0)
		return fx_probe_main(argc, argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	vg_local_reset();
	return rc;
}

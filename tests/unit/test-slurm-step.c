/*
 * test-slurm-step.c - job steps inside an allocation: the allocation's
 * CPU count, the VIGIL_SLURM_STEPS decision, the step id task-exec
 * records, the tail of srun's log, and the verdict on a step that left
 * no result record (srun's own messages as Slurm 22.05 prints them),
 * and the srun launcher of the direct scheduler put together from them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/path.h"
#include "schedulers/launcher.h"
#include "schedulers/slurm.h"

/* A wait status of exit code c, or of signal -c. */
static int
ws(int c)
{
	return c >= 0 ? (c & 0xff) << 8 : -c;
}

static void
test_alloc_cpus(void **state)
{
	assert_int_equal(vg_slurm_alloc_cpus("2"), 2);
	assert_int_equal(vg_slurm_alloc_cpus("2(x3),1"), 7);
	assert_int_equal(vg_slurm_alloc_cpus("4,8(x2)"), 20);
	assert_int_equal(vg_slurm_alloc_cpus(""), -1);
	assert_int_equal(vg_slurm_alloc_cpus("x"), -1);
	assert_int_equal(vg_slurm_alloc_cpus("2(x"), -1);
	assert_int_equal(vg_slurm_alloc_cpus("2(x0)"), -1);
	assert_int_equal(vg_slurm_alloc_cpus("2;3"), -1);
	assert_int_equal(vg_slurm_alloc_cpus("99999999(x99999999)"), -1);
	(void)state;
}

/*
 * Makes dir (a mkdtemp template) with an empty executable srun, fake its
 * path, and makes dir the whole PATH (only srun's presence is checked).
 * Returns the old PATH (caller frees), NULL when there was none.
 */
static char *
fake_srun(char *dir, char *fake, size_t n)
{
	char *path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(fake, n, "%s/srun", dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);
	setenv("PATH", dir, 1);
	return path;
}

static void
test_steps_wanted(void **state)
{
	char dir[] = "/tmp/vg-srun-XXXXXX", fake[64], *path;
	struct vg_err e;
	int cpus;

	vg_err_init(&e);
	path = fake_srun(dir, fake, sizeof fake);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_STEP_ID");
	unsetenv("VIGIL_SLURM_STEPS");
	setenv("SLURM_JOB_CPUS_PER_NODE", "2(x2)", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 0);
	setenv("VIGIL_SLURM_STEPS", "always", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), VG_EINVAL);
	assert_string_equal(e.msg, "VIGIL_SLURM_STEPS=always: not inside a "
	    "Slurm allocation (SLURM_JOB_ID is not set)");
	setenv("SLURM_JOB_ID", "42", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 1);
	assert_int_equal(cpus, 4);
	setenv("VIGIL_SLURM_STEPS", "auto", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 1);
	/* Inside a step already: auto runs here, always insists. */
	setenv("SLURM_STEP_ID", "0", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 0);
	setenv("VIGIL_SLURM_STEPS", "always", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 1);
	setenv("VIGIL_SLURM_STEPS", "never", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 0);
	setenv("VIGIL_SLURM_STEPS", "yes", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), VG_EINVAL);
	assert_string_equal(e.msg, "VIGIL_SLURM_STEPS: bad value 'yes' "
	    "(valid: auto, always, never, exec)");
	unsetenv("SLURM_STEP_ID");
	/* No srun: auto runs here, always fails. */
	setenv("PATH", "/nonexistent:", 1);
	setenv("VIGIL_SLURM_STEPS", "always", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), VG_ENOENT);
	assert_string_equal(e.msg, "VIGIL_SLURM_STEPS=always: srun is not "
	    "on PATH");
	unsetenv("VIGIL_SLURM_STEPS");
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 0);
	setenv("PATH", dir, 1);
	setenv("SLURM_JOB_CPUS_PER_NODE", "junk", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 1);
	assert_int_equal(cpus, 0);
	assert_int_equal(unlink(fake), 0);
	assert_int_equal(rmdir(dir), 0);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_JOB_CPUS_PER_NODE");
	if (path != NULL)
		setenv("PATH", path, 1);
	free(path);
	(void)state;
}

static void
test_verdict(void **state)
{
	struct vg_result r;

	assert_int_equal(vg_slurm_step_verdict("srun: error: Unable to "
	    "create step for job 3119: Memory required by task is not "
	    "available\n", ws(1), 0, &r), 1);
	assert_int_equal(r.state, VG_ST_BACKEND_ERROR);
	assert_int_equal(r.exit_code, 1);
	assert_string_equal(r.reason, "srun refused the step: srun: error: "
	    "Unable to create step for job 3119: Memory required by task is "
	    "not available");
	/* Waiting for resources is not a refusal. */
	assert_int_equal(vg_slurm_step_verdict("srun: Job 3115 step creation "
	    "temporarily disabled, retrying (Requested nodes are busy)\n"
	    "srun: Step created for job 3115\n", ws(0), 0, &r), 0);
	assert_int_equal(vg_slurm_step_verdict("srun: Job 3115 step creation "
	    "temporarily disabled, retrying (Requested nodes are busy)\n"
	    "srun: Step created for job 3115\n", ws(0), 1, &r), 1);
	assert_int_equal(r.state, VG_ST_LOST);
	assert_string_equal(r.reason, "srun exited 0, no result record");
	assert_int_equal(vg_slurm_step_verdict("srun: error: Node failure on "
	    "n3\nsrun: error: n3: task 0: Killed\n", ws(137), 0, &r), 1);
	assert_int_equal(r.state, VG_ST_NODE_FAIL);
	assert_string_equal(r.reason, "node lost under the step: srun: "
	    "error: Node failure on n3");
	assert_int_equal(vg_slurm_step_verdict("slurmstepd-vm: error: *** "
	    "STEP 7.2 ON vm CANCELLED AT 2026-11-30T04:36:10 DUE TO TIME "
	    "LIMIT ***\n", ws(137), 0, &r), 1);
	assert_int_equal(r.state, VG_ST_TIMEOUT);
	assert_int_equal(vg_slurm_step_verdict("slurmstepd-vm: error: *** "
	    "STEP 7.2 ON vm CANCELLED AT 2026-11-30T04:36:10 ***\n",
	    ws(137), 0, &r), 1);
	assert_int_equal(r.state, VG_ST_CANCELLED);
	assert_string_equal(r.reason, "step cancelled by Slurm: "
	    "slurmstepd-vm: error: *** STEP 7.2 ON vm CANCELLED AT "
	    "2026-11-30T04:36:10 ***");
	assert_int_equal(vg_slurm_step_verdict("", ws(-SIGKILL), 0, &r), 1);
	assert_int_equal(r.state, VG_ST_LOST);
	assert_int_equal(r.signal, SIGKILL);
	assert_string_equal(r.reason, "srun killed by signal 9; no result "
	    "record");
	assert_int_equal(vg_slurm_step_verdict("srun: error: vm: task 0: "
	    "Exited with exit code 139\n", ws(139), 0, &r), 0);
	assert_int_equal(vg_slurm_step_verdict(NULL, ws(139), 1, &r), 1);
	assert_string_equal(r.reason, "srun exited 139, no result record");
	assert_int_equal(vg_slurm_step_verdict("srun: error: vm: task 0: "
	    "Exited with exit code 139\n", ws(139), 1, &r), 1);
	assert_int_equal(r.state, VG_ST_LOST);
	assert_int_equal(r.exit_code, 139);
	assert_string_equal(r.reason, "srun exited 139, no result record: "
	    "srun: error: vm: task 0: Exited with exit code 139");
	(void)state;
}

/* Writes text to dir/name. */
static void
put(const char *dir, const char *name, const char *text)
{
	char *path = vg_path_join(dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void
test_step_id_and_log(void **state)
{
	char tmpl[] = "/tmp/vg-step-XXXXXX", id[64], cmd[128], *log, *big;
	size_t i;

	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(vg_slurm_step_id(tmpl, id, sizeof id), 0);
	log = vg_launch_log_tail(tmpl);
	assert_string_equal(log, "");
	free(log);
	put(tmpl, "step", "3119.4 vm 1234\n");
	assert_int_equal(vg_slurm_step_id(tmpl, id, sizeof id), 1);
	assert_string_equal(id, "3119.4");
	assert_int_equal(vg_slurm_step_id(tmpl, id, 4), 0);
	put(tmpl, "step", "3119 vm 1234\n");
	assert_int_equal(vg_slurm_step_id(tmpl, id, sizeof id), 0);
	put(tmpl, "step", ".4 vm\n");
	assert_int_equal(vg_slurm_step_id(tmpl, id, sizeof id), 0);
	put(tmpl, "step", "3119. vm\n");
	assert_int_equal(vg_slurm_step_id(tmpl, id, sizeof id), 0);
	/* Only the tail of a long log is read: srun's last words. */
	big = calloc(20001, 1);
	assert_non_null(big);
	for (i = 0; i < 20000; i++)
		big[i] = 'x';
	memcpy(big + 20000 - 6, "\nlast\n", 6);
	put(tmpl, "step.log", big);
	log = vg_launch_log_tail(tmpl);
	assert_int_equal(strlen(log), 8192);
	assert_string_equal(log + 8192 - 6, "\nlast\n");
	free(log);
	free(big);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
	assert_int_equal(system(cmd), 0);
	(void)state;
}

/* The direct scheduler's launcher: srun inside an allocation, else the
 * backend's; the srun one's jobs, slack and end of a step. */
static void
test_launcher(void **state)
{
	char dir[] = "/tmp/vg-launch-XXXXXX", fake[64], *path, run[64],
	    mf[96];
	struct vg_sched s = { .run_dir = NULL };
	struct vg_task task = { .index = 0 };
	struct vg_attempt a = { .task = &task, .attempt = 1,
	    .kill_grace = 5 };
	struct vg_result r, rec = { .state = VG_ST_TIMEOUT, .exit_code = -1 };
	struct vg_launcher l;
	struct vg_err e;

	vg_err_init(&e);
	path = fake_srun(dir, fake, sizeof fake);
	/* A run directory of the user's own with a manifest: its digest
	 * goes to every step. */
	snprintf(run, sizeof run, "%s/r1", dir);
	assert_int_equal(mkdir(run, 0700), 0);
	snprintf(mf, sizeof mf, "%s/manifest.json", run);
	assert_int_equal(vg_write_file_atomic(mf, "{}", 2, 0600, &e), 0);
	s.run_dir = run;
	unsetenv("SLURM_STEP_ID");
	setenv("SLURM_JOB_ID", "42", 1);
	setenv("SLURM_JOB_CPUS_PER_NODE", "2(x2)", 1);
	setenv("VIGIL_SLURM_VIGIL", "/opt/vigil", 1);
	setenv("VIGIL_SLURM_GRACE", "1", 1);
	setenv("VIGIL_SLURM_STEPS", "never", 1);
	assert_int_equal(vg_launcher_open(&l, NULL, &s, &e), 0);
	assert_ptr_equal(l.ops, &vg_launcher_backend);
	assert_int_equal(s.remote, 0);
	assert_int_equal(s.jobs, 0);
	vg_launcher_close(&l);

	unsetenv("VIGIL_SLURM_STEPS");
	assert_int_equal(vg_launcher_open(&l, NULL, &s, &e), 0);
	assert_ptr_equal(l.ops, &vg_launcher_srun);
	assert_int_equal(s.remote, 1);
	assert_int_equal(s.jobs, 4);
	assert_true(l.ops->slack(&a) == 35.0);
	/* No record, nothing from srun: wait, up to the grace window. */
	a.task_dir = dir;
	assert_int_equal(l.ops->ended(&l, &a, ws(0), 0, 0, &r),
	    VG_LAUNCH_WAIT);
	assert_int_equal(l.ops->ended(&l, &a, ws(0), 1000, 0, &r),
	    VG_LAUNCH_DONE);
	assert_int_equal(r.state, VG_ST_LOST);
	assert_int_equal(l.ops->ended(&l, &a, ws(0), 0, 1, &r),
	    VG_LAUNCH_DONE);
	/* A record settles it, time-out included. */
	assert_int_equal(vg_result_write(dir, &rec, &e), 0);
	assert_int_equal(l.ops->ended(&l, &a, ws(0), 0, 0, &r),
	    VG_LAUNCH_RECORDED);
	assert_int_equal(r.state, VG_ST_TIMEOUT);
	rec.state = VG_ST_CANCELLED;
	assert_int_equal(vg_result_write(dir, &rec, &e), 0);
	assert_int_equal(l.ops->ended(&l, &a, ws(0), 0, 0, &r),
	    VG_LAUNCH_DONE);
	vg_launcher_close(&l);

	if (path != NULL)
		setenv("PATH", path, 1);
	free(path);
	snprintf(fake, sizeof fake, "rm -rf '%s'", dir);
	assert_int_equal(system(fake), 0);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_JOB_CPUS_PER_NODE");
	unsetenv("VIGIL_SLURM_VIGIL");
	unsetenv("VIGIL_SLURM_GRACE");
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_cpus),
		cmocka_unit_test(test_steps_wanted),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_step_id_and_log),
		cmocka_unit_test(test_launcher),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-slurm-pack.c - slurm.pack: sizing packs by tasks and by walltime
 * (even packs, the job's time limit, parallel capped by the pack), the
 * pack file's lines and their parser's refusals, the batch script of a
 * pack, the manifest's errors with file:line:column, and the claims of
 * retries in place (one side wins; links and junk are refused) with the
 * retry rule pack-exec shares with the driver.
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

#include "common/diag.h"
#include "common/path.h"
#include "runner/core/retry.h"
#include "runner/manifest/manifest.h"
#include "schedulers/slurm.h"

/* Plans n tasks of task_secs with pk; asserts success. */
static struct vg_slurm_pack_plan
plan_ok(int tasks, int parallel, double walltime, size_t n, double secs)
{
	struct vg_slurm_pack pk = { .tasks = tasks, .parallel = parallel,
	    .walltime = walltime, .steps = 1 };
	struct vg_slurm_pack_plan p;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_slurm_pack_plan(&pk, n, secs, &p, &e), 0);
	return p;
}

static void
test_plan_tasks(void **state)
{
	struct vg_slurm_pack_plan p;

	(void)state;
	/* 2000 by 50: 40 jobs, one at a time, 50 x 60 s + a minute. */
	p = plan_ok(50, 0, 0, 2000, 60);
	assert_int_equal(p.per, 50);
	assert_int_equal(p.njobs, 40);
	assert_int_equal(p.parallel, 1);
	assert_int_equal(p.time, 50 * 60 + 60);
	/* Even packs: 10 by 4 is 3 jobs of 4, 3, 3 (per 4), not 4 4 2. */
	p = plan_ok(4, 0, 0, 10, 0);
	assert_int_equal(p.njobs, 3);
	assert_int_equal(p.per, 4);
	assert_int_equal(p.time, 0);
	/* 9 by 4: 3 jobs of 3. */
	p = plan_ok(4, 2, 0, 9, 10);
	assert_int_equal(p.njobs, 3);
	assert_int_equal(p.per, 3);
	assert_int_equal(p.parallel, 2);
	assert_int_equal(p.time, 2 * 10 + 60);
	/* Fewer tasks than a pack: one job, parallel no more than it. */
	p = plan_ok(100, 8, 0, 5, 30);
	assert_int_equal(p.njobs, 1);
	assert_int_equal(p.per, 5);
	assert_int_equal(p.parallel, 5);
	assert_int_equal(p.time, 30 + 60);
}

static void
test_plan_walltime(void **state)
{
	struct vg_slurm_pack_plan p;

	(void)state;
	/* 2 h of 2-minute tasks, 4 at once: 60 rounds, 240 a job. */
	p = plan_ok(0, 4, 7200, 20000, 120);
	assert_int_equal(p.njobs, 84);	/* ceil(20000 / 240) */
	assert_int_equal(p.per, 239);	/* ceil(20000 / 84) */
	assert_int_equal(p.parallel, 4);
	assert_int_equal(p.time, 60 * 120 + 60);
	assert_true(p.time <= 7200 + 60);
	/* A task longer than the target still gets a job of its own. */
	p = plan_ok(0, 0, 600, 3, 3600);
	assert_int_equal(p.per, 1);
	assert_int_equal(p.njobs, 3);
	assert_int_equal(p.time, 3600 + 60);
}

static void
test_plan_errors(void **state)
{
	struct vg_slurm_pack pk = { 0 };
	struct vg_slurm_pack_plan p;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_slurm_pack_plan(&pk, 10, 60, &p, &e), VG_EINVAL);
	assert_non_null(strstr(e.msg, "neither 'tasks' nor 'walltime'"));
	pk.tasks = 5;
	vg_err_init(&e);
	assert_int_equal(vg_slurm_pack_plan(&pk, 0, 60, &p, &e), VG_EINVAL);
	assert_non_null(strstr(e.msg, "no tasks"));
	pk.tasks = 0;
	pk.walltime = 3600;
	vg_err_init(&e);
	assert_int_equal(vg_slurm_pack_plan(&pk, 10, 0, &p, &e), VG_EINVAL);
	assert_non_null(strstr(e.msg, "'resources.time' or 'timeout'"));
}

static void
test_pack_file(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_slurm_pack_entry *v;
	struct vg_err e;
	size_t n;

	(void)state;
	vg_slurm_pack_line(&b, 0, 0, 1, 8, 0);
	vg_slurm_pack_line(&b, 0, 1, 1, 8, 0);
	vg_slurm_pack_line(&b, 1, 2, 2, 12.5, 209715200);
	vg_slurm_pack_line(&b, 1, 7, 2, 0, 0);
	assert_string_equal(vg_buf_str(&b), "0 0 1 8.000 0\n0 1 1 8.000 0\n"
	    "1 2 2 12.500 209715200\n1 7 2 0.000 0\n");
	vg_err_init(&e);
	assert_int_equal(vg_slurm_pack_parse(vg_buf_str(&b), 1, &v, &n, &e),
	    0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].index, 2);
	assert_int_equal(v[0].attempt, 2);
	assert_true(v[0].timeout == 12.5);
	assert_true(v[0].memory == 209715200);
	assert_int_equal(v[1].index, 7);
	assert_true(v[1].timeout == 0);
	free(v);
	/* No task for an element. */
	vg_err_init(&e);
	assert_int_equal(vg_slurm_pack_parse(vg_buf_str(&b), 2, &v, &n, &e),
	    VG_ENOENT);
	assert_null(v);
	assert_non_null(strstr(e.msg, "no task for element 2"));
	vg_buf_release(&b);
}

static void
test_pack_file_bad(void **state)
{
	static const char *const bad[] = {
		"0 1 1 8\n",			/* a field short */
		"0 1 1 8 0 9\n",		/* one too many */
		"0 -1 1 8 0\n",			/* negative index */
		"0 1 0 8 0\n",			/* attempt 0 */
		"x 1 1 8 0\n",
		"0 1 1 8 0; rm -rf /\n",
		"0 1 1 nan 0\n",
	};
	struct vg_slurm_pack_entry *v;
	struct vg_err e;
	char text[256];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "0 0 1 8 0\n%s", bad[i]);
		vg_err_init(&e);
		assert_int_equal(vg_slurm_pack_parse(text, 0, &v, &n, &e),
		    VG_EINVAL);
		assert_null(v);
		assert_int_equal(n, 0);
		assert_string_equal(e.msg, "pack file line 2: not 'ELEMENT "
		    "INDEX ATTEMPT TIMEOUT MEMORY'");
	}
}

static void
test_script(void **state)
{
	struct vg_slurm_job j;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	(void)state;
	memset(&j, 0, sizeof(j));
	j.name = "20261206-010000-abcdef";
	j.run_dir = "/home/u/runs/20261206-010000-abcdef";
	j.vigil = "/usr/bin/vigil";
	j.manifest_sha256 = "ab12";
	j.attempt = 1;
	j.array = "0-39";
	j.nodes = 1;
	j.ntasks = 4;
	j.cpus = 2;
	j.pack = "submit-1.pack";
	j.pack_steps = 1;
	vg_err_init(&e);
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "#SBATCH --array=0-39\n"));
	assert_non_null(strstr(vg_buf_str(&b), "#SBATCH --ntasks=4\n"));
	assert_non_null(strstr(vg_buf_str(&b), "VIGIL_SLURM_STEPS=always\n"
	    "export VIGIL_SLURM_STEPS\nexec /usr/bin/vigil pack-exec "
	    "--manifest-sha256 ab12 /home/u/runs/20261206-010000-abcdef "
	    "submit-1.pack \"$SLURM_ARRAY_TASK_ID\"\n"));
	/* Local tasks: task-exec processes of the job. */
	vg_buf_reset(&b);
	j.pack_steps = 0;
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "VIGIL_SLURM_STEPS=exec\n"));
	assert_null(strstr(vg_buf_str(&b), "VIGIL_PACK_TIME"));
	/* The job's time limit, for pack-exec's retries in place. */
	vg_buf_reset(&b);
	j.time = 780;
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "VIGIL_PACK_TIME=780\n"
	    "export VIGIL_PACK_TIME\n"));
	/* A pack name is made by vigil; anything else is refused. */
	vg_buf_reset(&b);
	j.pack = "../x; rm";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: bad pack file name '../x; rm'");
	vg_buf_release(&b);
}

/* VIGIL_SLURM_STEPS=exec (a pack's local tasks): task-exec processes,
 * as many as the allocation's CPUs, inside a job or not. */
static void
test_steps_exec(void **state)
{
	struct vg_err e;
	int cpus;

	(void)state;
	setenv("VIGIL_SLURM_STEPS", "exec", 1);
	setenv("SLURM_JOB_CPUS_PER_NODE", "2(x2),1", 1);
	vg_err_init(&e);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 2);
	assert_int_equal(cpus, 5);
	setenv("SLURM_JOB_CPUS_PER_NODE", "bad", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), 2);
	assert_int_equal(cpus, 0);
	setenv("VIGIL_SLURM_STEPS", "execs", 1);
	assert_int_equal(vg_slurm_steps_wanted(&cpus, &e), VG_EINVAL);
	assert_string_equal(e.msg, "VIGIL_SLURM_STEPS: bad value 'execs' "
	    "(valid: auto, always, never, exec)");
	unsetenv("VIGIL_SLURM_STEPS");
	unsetenv("SLURM_JOB_CPUS_PER_NODE");
}

/* Loads text as "p.yaml"; returns the diagnostics joined. */
static int
load(const char *text, char *out, size_t n)
{
	struct vg_load_opts opts;
	struct vg_manifest *m = NULL;
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_err e;
	size_t i, o = 0;
	int rc;

	memset(&opts, 0, sizeof(opts));
	opts.no_configs = 1;
	vg_err_init(&e);
	rc = vg_manifest_load_mem("p.yaml", text, strlen(text), &opts, &m,
	    &d, &e);
	out[0] = '\0';
	for (i = 0; i < d.lines.n && o < n - 1; i++)
		o += (size_t)snprintf(out + o, n - o, "%s%s", i ? "\n" : "",
		    d.lines.v[i]);
	vg_diag_release(&d);
	vg_manifest_free(m);
	return rc;
}

#define HEAD	"version: 1\nname: p\nscheduler: slurm\n" \
		"matrix:\n  i: [1, 2, 3]\ncommand: echo hi\n"

static void
test_manifest(void **state)
{
	static const struct { const char *yaml, *want; } bad[] = {
		{ HEAD "slurm:\n  pack: {parallel: 2}\n",
		  "p.yaml:8:9: 'slurm.pack' needs 'tasks' (tasks per job) or "
		  "'walltime' (how long a job should run, e.g. 2h)" },
		{ HEAD "slurm:\n  pack:\n    tasks: 5\n    walltime: 1h\n",
		  "p.yaml:9:5: 'slurm.pack' takes one of 'tasks' and "
		  "'walltime', not both" },
		{ HEAD "slurm:\n  pack:\n    tasks: 2\n    parallel: 4\n",
		  "p.yaml:9:5: 'slurm.pack.parallel' (4) is larger than "
		  "'slurm.pack.tasks' (2): a job runs at most its tasks at "
		  "once" },
		{ HEAD "slurm:\n  pack:\n    tasks: 0\n",
		  "p.yaml:9:12: 'slurm.pack.tasks' must be between 1 and "
		  "1000000, not 0" },
		{ HEAD "slurm:\n  pack:\n    walltime: 10s\n",
		  "p.yaml:9:15: 'slurm.pack.walltime'" },
		{ HEAD "slurm:\n  pack:\n    tasks: 2\n    steps: maybe\n",
		  "p.yaml:10:12: 'slurm.pack.steps'" },
		{ HEAD "slurm:\n  pack:\n    task: 2\n",
		  "p.yaml:9:5: " },
		{ HEAD "slurm:\n  pack:\n    walltime: 1h\n",
		  "p.yaml:9:5: 'slurm.pack.walltime' sizes packs from each "
		  "task's time limit: set 'resources.time' or 'timeout', or "
		  "give 'slurm.pack.tasks'" },
		{ HEAD "resources:\n  ntasks: 2\nslurm:\n  pack:\n"
		  "    tasks: 2\n",
		  "p.yaml:10:3: 'slurm.pack' runs each task as one step on one "
		  "node; resources.nodes, ntasks and ntasks_per_node above 1 "
		  "need one job per task (remove slurm.pack)" },
		{ HEAD "slurm:\n  requeue: true\n  pack:\n    tasks: 2\n",
		  "p.yaml:8:3: 'slurm.requeue' with 'slurm.pack': Slurm would "
		  "run a requeued pack's finished tasks again; vigil retries "
		  "its unfinished ones itself (retry.on: [node_fail, "
		  "preempted])" },
	};
	char out[2048];
	size_t i;

	(void)state;
	assert_int_equal(load(HEAD "timeout: 2m\nslurm:\n  pack:\n"
	    "    walltime: 1h\n    parallel: 4\n    steps: false\n", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(load(bad[i].yaml, out, sizeof(out)), 0);
		if (strncmp(out, bad[i].want, strlen(bad[i].want)) != 0)
			fail_msg("case %zu: got '%s', want '%s...'", i, out,
			    bad[i].want);
	}
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
test_claim(void **state)
{
	char dir[] = "/tmp/vg-claim-XXXXXX", *path;
	struct vg_slurm_claim pack = { VG_CLAIM_PACK, 8.5, 1048576 };
	struct vg_slurm_claim fresh = { VG_CLAIM_NEW, 0, 0 }, got;
	struct vg_err e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	vg_err_init(&e);
	assert_int_equal(vg_slurm_claim_read(dir, 2, &got, &e), 0);
	assert_int_equal(got.who, VG_CLAIM_NONE);
	/* The first claim holds; the second side reads it. */
	assert_int_equal(vg_slurm_claim_make(dir, 2, &pack, &got, &e), 1);
	assert_int_equal(got.who, VG_CLAIM_PACK);
	assert_int_equal(vg_slurm_claim_make(dir, 2, &fresh, &got, &e), 0);
	assert_int_equal(got.who, VG_CLAIM_PACK);
	assert_true(got.timeout == 8.5);
	assert_int_equal(got.memory, 1048576);
	assert_int_equal(vg_slurm_claim_make(dir, 3, &fresh, &got, &e), 1);
	assert_int_equal(vg_slurm_claim_make(dir, 3, &pack, &got, &e), 0);
	assert_int_equal(got.who, VG_CLAIM_NEW);
	/* Being written (empty): none yet. */
	put(dir, "claim.4", "");
	assert_int_equal(vg_slurm_claim_make(dir, 4, &pack, &got, &e), 0);
	assert_int_equal(got.who, VG_CLAIM_NONE);
	/* Junk is refused, naming the file. */
	put(dir, "claim.5", "pack 1 x\n");
	vg_err_init(&e);
	assert_int_equal(vg_slurm_claim_read(dir, 5, &got, &e), VG_EPARSE);
	assert_non_null(strstr(e.msg, "claim.5' is not a claim"));
	/* A link planted at the name is neither followed nor replaced. */
	path = vg_path_join(dir, "claim.6");
	assert_int_equal(symlink("/tmp/vg-claim-elsewhere", path), 0);
	vg_err_init(&e);
	assert_true(vg_slurm_claim_make(dir, 6, &pack, &got, &e) < 0);
	assert_int_equal(got.who, VG_CLAIM_NONE);
	assert_int_equal(access("/tmp/vg-claim-elsewhere", F_OK), -1);
	unlink(path);
	free(path);
	for (int k = 2; k <= 5; k++) {
		char name[32];

		snprintf(name, sizeof(name), "claim.%d", k);
		path = vg_path_join(dir, name);
		unlink(path);
		free(path);
	}
	rmdir(dir);
}

static void
test_retry_rule(void **state)
{
	struct vg_retry r = { .max = 1, .on = VG_RETRY_FAILED };

	(void)state;
	assert_true(vg_retry_wanted(&r, VG_ST_FAILED, 0, 1));
	assert_false(vg_retry_wanted(&r, VG_ST_FAILED, 0, 2));
	assert_false(vg_retry_wanted(&r, VG_ST_TIMEOUT, 0, 1));
	assert_false(vg_retry_wanted(&r, VG_ST_SUCCEEDED, 0, 1));
	r.on = 0;	/* every retried state */
	assert_true(vg_retry_wanted(&r, VG_ST_TIMEOUT, 0, 1));
	assert_false(vg_retry_wanted(&r, VG_ST_CANCELLED, 0, 1));
	assert_false(vg_retry_wanted(&r, VG_ST_BACKEND_ERROR,
	    VG_CAUSE_PERMANENT, 1));
	r.backoff = 2;
	r.backoff_max = 5;
	assert_true(vg_retry_backoff(&r, 1) == 2);
	assert_true(vg_retry_backoff(&r, 2) == 4);
	assert_true(vg_retry_backoff(&r, 3) == 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_tasks),
		cmocka_unit_test(test_plan_walltime),
		cmocka_unit_test(test_plan_errors),
		cmocka_unit_test(test_pack_file),
		cmocka_unit_test(test_pack_file_bad),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_steps_exec),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_claim),
		cmocka_unit_test(test_retry_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

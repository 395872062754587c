/*
 * test-task-env.c - the one builder of an attempt's environment: the
 * exact set and order for each place a task runs (this host, an image,
 * an engine, a remote login), with a controlled host environment.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/gpu.h"
#include "backends/backend.h"

/* The task env's strings (struct vg_kv holds them writable). */
static char k_name[] = "K", k_value[] = "v";
static char path_name[] = "PATH", path_value[] = "/opt/bin";

struct fixture {
	struct vg_manifest	m;
	struct vg_task		task;
	struct vg_kv		kv[2];
	struct vg_attempt	a;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->a.m = &f->m;
	f->a.task = &f->task;
	f->a.run_id = "run1";
	f->a.attempt = 2;
	f->a.task_dir = "/st/runs/run1/tasks/3";
	f->a.scratch_dir = "/scratch/s1";
	f->task.index = 3;
	f->kv[0].key = k_name;
	f->kv[0].value = k_value;
	f->kv[1].key = path_name;
	f->kv[1].value = path_value;
	f->task.env.v = f->kv;
	f->task.env.n = 1;
	setenv("PATH", "/host/bin", 1);
	setenv("HOME", "/host/home", 1);
	setenv("LANG", "C.UTF-8", 1);
	unsetenv("LC_ALL");
	setenv("USER", "u", 1);
	setenv("LOGNAME", "u", 1);
	setenv("TZ", "UTC", 1);
	unsetenv("TMPDIR");
	setenv("SECRET_TOKEN", "s", 1);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	unsetenv("SECRET_TOKEN");
	free(*state);
	return 0;
}

/* Checks the environment of f at where against want, '|'-joined. */
static void
check(struct fixture *f, enum vg_env_where where, const char *want)
{
	struct vg_strv v = VG_STRV_INIT;
	struct vg_buf b = VG_BUF_INIT;
	size_t i;

	vg_task_env(&f->a, where, &v);
	for (i = 0; i < v.n; i++) {
		if (i > 0)
			vg_buf_addc(&b, '|');
		vg_buf_adds(&b, v.v[i]);
	}
	assert_string_equal(vg_buf_str(&b), want);
	vg_buf_release(&b);
	vg_strv_release(&v);
}

/* This host: the safe base, the task env, every VIGIL_* variable. */
static void
test_host(void **state)
{
	struct fixture *f = *state;
	struct vg_strv v = VG_STRV_INIT;

	check(f, VG_ENV_HOST, "PATH=/host/bin|HOME=/host/home|LANG=C.UTF-8|"
	    "USER=u|LOGNAME=u|TZ=UTC|K=v|VIGIL_RUN_ID=run1|"
	    "VIGIL_TASK_INDEX=3|VIGIL_TASK_DIR=/st/runs/run1/tasks/3|"
	    "VIGIL_ATTEMPT=2|VIGIL_SCRATCH_DIR=/scratch/s1|"
	    "CUDA_VISIBLE_DEVICES=");
	/* vg_attempt_env is the same set. */
	vg_attempt_env(&f->a, &v);
	assert_int_equal(v.n, 13);
	assert_string_equal(v.v[4], "LOGNAME=u");
	vg_strv_release(&v);
	/* No PATH at all: a default one. */
	unsetenv("PATH");
	unsetenv("HOME");
	f->a.scratch_dir = NULL;
	check(f, VG_ENV_HOST, "PATH=/usr/local/bin:/usr/bin:/bin|"
	    "LANG=C.UTF-8|USER=u|LOGNAME=u|TZ=UTC|K=v|VIGIL_RUN_ID=run1|"
	    "VIGIL_TASK_INDEX=3|VIGIL_TASK_DIR=/st/runs/run1/tasks/3|"
	    "VIGIL_ATTEMPT=2|CUDA_VISIBLE_DEVICES=");
	/* GPUs given by the scheduler: their ids, and VIGIL_GPUS. */
	f->a.gpu_set = 1;
	snprintf(f->a.gpu_ids, sizeof(f->a.gpu_ids), "1,3");
	check(f, VG_ENV_HOST, "PATH=/usr/local/bin:/usr/bin:/bin|"
	    "LANG=C.UTF-8|USER=u|LOGNAME=u|TZ=UTC|K=v|VIGIL_RUN_ID=run1|"
	    "VIGIL_TASK_INDEX=3|VIGIL_TASK_DIR=/st/runs/run1/tasks/3|"
	    "VIGIL_ATTEMPT=2|VIGIL_GPUS=1,3|CUDA_VISIBLE_DEVICES=1,3");
	/* AMD: ROCR_VISIBLE_DEVICES, which HIP numbers from 0. */
	f->a.gpu_vendor = VG_GPU_AMD;
	check(f, VG_ENV_ENGINE, "K=v|VIGIL_RUN_ID=run1|VIGIL_TASK_INDEX=3|"
	    "VIGIL_TASK_DIR=/st/runs/run1/tasks/3|VIGIL_ATTEMPT=2|"
	    "VIGIL_GPUS=1,3|ROCR_VISIBLE_DEVICES=1,3");
	/* In an image the engine maps the devices: only VIGIL_GPUS. */
	check(f, VG_ENV_IMAGE, "LANG=C.UTF-8|TZ=UTC|K=v|VIGIL_RUN_ID=run1|"
	    "VIGIL_TASK_INDEX=3|VIGIL_TASK_DIR=/st/runs/run1/tasks/3|"
	    "VIGIL_ATTEMPT=2|VIGIL_GPUS=1,3");
	/* Given none: every GPU hidden. */
	f->a.gpu_vendor = VG_GPU_NVIDIA;
	f->a.gpu_ids[0] = '\0';
	check(f, VG_ENV_REMOTE, "K=v|VIGIL_RUN_ID=run1|VIGIL_TASK_INDEX=3|"
	    "VIGIL_ATTEMPT=2|VIGIL_GPUS=|CUDA_VISIBLE_DEVICES=|"
	    "ROCR_VISIBLE_DEVICES=");
}

/* An image: no host PATH, HOME, USER, LOGNAME; the task's own PATH. */
static void
test_image(void **state)
{
	struct fixture *f = *state;

	check(f, VG_ENV_IMAGE, "LANG=C.UTF-8|TZ=UTC|K=v|VIGIL_RUN_ID=run1|"
	    "VIGIL_TASK_INDEX=3|VIGIL_TASK_DIR=/st/runs/run1/tasks/3|"
	    "VIGIL_ATTEMPT=2|VIGIL_SCRATCH_DIR=/scratch/s1");
	f->task.env.n = 2;
	check(f, VG_ENV_IMAGE, "LANG=C.UTF-8|TZ=UTC|K=v|PATH=/opt/bin|"
	    "VIGIL_RUN_ID=run1|VIGIL_TASK_INDEX=3|"
	    "VIGIL_TASK_DIR=/st/runs/run1/tasks/3|VIGIL_ATTEMPT=2|"
	    "VIGIL_SCRATCH_DIR=/scratch/s1");
}

/* An engine and a remote login: nothing of the host's environment. */
static void
test_engine_remote(void **state)
{
	struct fixture *f = *state;

	check(f, VG_ENV_ENGINE, "K=v|VIGIL_RUN_ID=run1|VIGIL_TASK_INDEX=3|"
	    "VIGIL_TASK_DIR=/st/runs/run1/tasks/3|VIGIL_ATTEMPT=2|"
	    "CUDA_VISIBLE_DEVICES=");
	check(f, VG_ENV_REMOTE, "K=v|VIGIL_RUN_ID=run1|VIGIL_TASK_INDEX=3|"
	    "VIGIL_ATTEMPT=2|CUDA_VISIBLE_DEVICES=");
	/* Without a task (a manifest-level command) no index either. */
	f->a.task = NULL;
	check(f, VG_ENV_REMOTE, "VIGIL_RUN_ID=run1|VIGIL_ATTEMPT=2|"
	    "CUDA_VISIBLE_DEVICES=");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_engine_remote, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * isolation-overhead.c - per-task cost of the local backend's isolation
 * levels, through the backend API exactly as the direct scheduler uses
 * it (start, poll the pidfd, reap, finish, cleanup), against a bare
 * posix_spawn + waitpid of the same command in the same run.
 *
 * The levels are interleaved task by task so that load from other
 * processes spreads evenly over all of them.
 *
 * usage: isolation-overhead [N] [COMMAND]   (default 300 tasks of true)
 */
#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/local.h"
#include "runner/path.h"

extern char **environ;

#define NLEVELS 3

/* One task through the backend API; returns 0 on success. */
static int
one_task(struct vg_attempt *a)
{
	struct vg_result r;
	struct vg_err e;
	struct pollfd pfd;
	int ws;

	vg_err_init(&e);
	if (vg_backend_start(&vg_backend_local, a, &e) != 0) {
		fprintf(stderr, "start: %s\n", e.msg);
		return -1;
	}
	pfd.fd = a->pidfd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	waitpid(a->pid, &ws, 0);
	vg_backend_finish(a, ws, &r, &e);
	vg_backend_cleanup(a);
	if (r.state != VG_ST_SUCCEEDED) {
		fprintf(stderr, "task: %s %s\n", vg_state_name(r.state),
		    r.reason);
		return -1;
	}
	return 0;
}

/* Monotonic clock in milliseconds, with sub-millisecond precision. */
static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* posix_spawn + waitpid of argv. */
static int
baseline(char **argv)
{
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return -1;
	return waitpid(pid, &st, 0) == pid ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static const enum vg_isolation_level lv[NLEVELS] = {
		VG_ISO_NONE, VG_ISO_STANDARD, VG_ISO_STRICT,
	};
	static const char *const names[NLEVELS] = {
		"none", "standard", "strict",
	};
	struct vg_manifest m[NLEVELS];
	struct vg_task t;
	struct vg_attempt a[NLEVELS];
	char dir[NLEVELS][64], *cmdv[2], deftrue[] = "true";
	double tl[NLEVELS] = { 0 }, tb = 0;
	double t0;
	int n = argc > 1 ? atoi(argv[1]) : 300, i, k;

	cmdv[0] = argc > 2 ? argv[2] : deftrue;
	cmdv[1] = NULL;
	memset(&t, 0, sizeof(t));
	t.command.is_argv = 1;
	vg_strv_push(&t.command.argv, cmdv[0]);
	for (k = 0; k < NLEVELS; k++) {
		memset(&m[k], 0, sizeof(m[k]));
		m[k].isolation.level = lv[k];
		snprintf(dir[k], sizeof(dir[k]), "/var/tmp/vg-bench-XXXXXX");
		if (mkdtemp(dir[k]) == NULL)
			return 1;
		memset(&a[k], 0, sizeof(a[k]));
		a[k].m = &m[k];
		a[k].task = &t;
		a[k].run_id = "bench";
		a[k].task_dir = dir[k];
		a[k].attempt = 1;
		/* warm up: compiles the sandbox, faults in the code */
		if (one_task(&a[k]) != 0)
			return 1;
	}
	for (i = 0; i < n; i++) {
		t0 = now_ms();
		if (baseline(cmdv) != 0)
			return 1;
		tb += now_ms() - t0;
		for (k = 0; k < NLEVELS; k++) {
			t0 = now_ms();
			if (one_task(&a[k]) != 0)
				return 1;
			tl[k] += now_ms() - t0;
		}
	}
	printf("tasks per level:     %d x %s\n", n, cmdv[0]);
	printf("posix_spawn+waitpid: %.3f ms/task\n", tb / n);
	for (k = 0; k < NLEVELS; k++)
		printf("local %-9s      %.3f ms/task  (%+.3f ms vs spawn)\n",
		    names[k], tl[k] / n, (tl[k] - tb) / n);
	printf("standard - none:     %+.3f ms/task (target <= 1 ms)\n",
	    (tl[1] - tl[0]) / n);
	printf("strict - none:       %+.3f ms/task (target <= 3 ms)\n",
	    (tl[2] - tl[0]) / n);
	for (k = 0; k < NLEVELS; k++)
		vg_rm_rf(dir[k], NULL);
	vg_strv_release(&t.command.argv);
	vg_local_reset();
	return 0;
}

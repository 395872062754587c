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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/core/plugins.h"
#include "backends/backend.h"
#include "backends/local.h"
#include "common/path.h"

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

/* CPU time (user + system) of this process and its reaped children. */
static double
cpu_ms(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec +
	    c.ru_utime.tv_sec + c.ru_stime.tv_sec) * 1e3 +
	    (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec +
	    c.ru_utime.tv_usec + c.ru_stime.tv_usec) / 1e3;
}

/* fork + execvp + waitpid of argv, as xargs does. */
static int
forkexec(char **argv)
{
	pid_t pid;
	int st;

	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return waitpid(pid, &st, 0) == pid ? 0 : -1;
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
	double tl[NLEVELS] = { 0 }, tb = 0, cl[NLEVELS] = { 0 }, cb = 0;
	double tf = 0, cf = 0;
	double t0, c0;
	int n = argc > 1 ? atoi(argv[1]) : 300, i, k;

	vg_plugins_init();
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
		c0 = cpu_ms();
		if (baseline(cmdv) != 0)
			return 1;
		tb += now_ms() - t0;
		cb += cpu_ms() - c0;
		t0 = now_ms();
		c0 = cpu_ms();
		if (forkexec(cmdv) != 0)
			return 1;
		tf += now_ms() - t0;
		cf += cpu_ms() - c0;
		for (k = 0; k < NLEVELS; k++) {
			t0 = now_ms();
			c0 = cpu_ms();
			if (one_task(&a[k]) != 0)
				return 1;
			tl[k] += now_ms() - t0;
			cl[k] += cpu_ms() - c0;
		}
	}
	/* Wall time is what a user waits for; CPU time (this process and
	 * its children, user + system) is what the machine pays and moves
	 * far less with load from other processes. */
	printf("tasks per level: %d x %s, levels interleaved\n", n, cmdv[0]);
	printf("%-22s %10s %10s\n", "", "wall ms", "cpu ms");
	printf("%-22s %10.3f %10.3f\n", "posix_spawn+waitpid", tb / n, cb / n);
	printf("%-22s %10.3f %10.3f\n", "fork+exec+waitpid", tf / n, cf / n);
	for (k = 0; k < NLEVELS; k++)
		printf("local %-16s %10.3f %10.3f\n", names[k], tl[k] / n,
		    cl[k] / n);
	printf("%-22s %+10.3f %+10.3f  (target <= 1 ms)\n",
	    "standard - none", (tl[1] - tl[0]) / n, (cl[1] - cl[0]) / n);
	printf("%-22s %+10.3f %+10.3f  (target <= 3 ms)\n",
	    "strict - none", (tl[2] - tl[0]) / n, (cl[2] - cl[0]) / n);
	printf("%-22s %10.2fx %9.2fx\n", "none / fork+exec",
	    tl[0] / tf, cl[0] / cf);
	printf("%-22s %10.2fx %9.2fx\n", "standard / fork+exec",
	    tl[1] / tf, cl[1] / cf);
	for (k = 0; k < NLEVELS; k++)
		vg_rm_rf(dir[k], NULL);
	vg_strv_release(&t.command.argv);
	vg_local_reset();
	return 0;
}

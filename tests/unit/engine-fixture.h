/*
 * engine-fixture.h - shared by test-direct.c and test-run.c: a hand-built
 * manifest and task set (no parser needed), a private VIGIL_HOME, and a
 * small process backend ("sh") that runs each task's command under
 * /bin/sh -c in its own process group with output in the task directory.
 *
 * The sh backend reports exit 99 as OOM and exit 98 as NODE_FAIL so that
 * the driver's per-state retry rules can be tested with real processes.
 */
#ifndef ENGINE_FIXTURE_H
#define ENGINE_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/buf.h"
#include "runner/manifest/manifest.h"
#include "common/path.h"
#include "runner/manifest/task.h"

static int fx_starts;		/* processes started by the sh backend */
static int fx_fail_start;	/* make start fail */

/* Starts the task command in its own process group. */
static int
sh_start(struct vg_attempt *a, struct vg_err *e)
{
	char out[4096], err[4096], run[64], idx[32], att[32];
	char path[] = "PATH=/usr/bin:/bin", sh[] = "/bin/sh", dc[] = "-c";
	sigset_t none;
	pid_t pid;
	int fd;

	if (fx_fail_start)
		return vg_err_set(e, VG_EBACKEND, "sh: refused to start");
	/* On the stack: a child killed before exec must leak nothing. */
	snprintf(out, sizeof(out), "%s/stdout", a->task_dir);
	snprintf(err, sizeof(err), "%s/stderr", a->task_dir);
	snprintf(run, sizeof(run), "VIGIL_RUN_ID=%s", a->run_id);
	snprintf(idx, sizeof(idx), "VIGIL_TASK_INDEX=%d", a->task->index);
	snprintf(att, sizeof(att), "VIGIL_ATTEMPT=%d", a->attempt);
	pid = fork();
	if (pid < 0)
		return vg_err_errno(e, "fork");
	if (pid == 0) {
		char *env[] = { path, run, idx, att, NULL };
		char *argv[] = { sh, dc, a->task->command.shell, NULL };

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if ((fd = open("/dev/null", O_RDONLY)) >= 0)
			dup2(fd, 0);
		if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0)
			dup2(fd, 1);
		if ((fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0)
			dup2(fd, 2);
		if (chdir(a->task_dir) != 0)
			_exit(127);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	setpgid(pid, pid);
	a->pid = pid;
	a->pidfd = -1;
	a->started = vg_now();
	fx_starts++;
	return 0;
}

static int
sh_finish(struct vg_attempt *a, int ws, struct vg_result *r,
    struct vg_err *e)
{
	(void)a;
	(void)e;
	memset(r, 0, sizeof(*r));
	r->ended = vg_now();
	if (WIFEXITED(ws)) {
		r->exit_code = WEXITSTATUS(ws);
		r->state = r->exit_code == 0 ? VG_ST_SUCCEEDED :
		    r->exit_code == 99 ? VG_ST_OOM :
		    r->exit_code == 98 ? VG_ST_NODE_FAIL : VG_ST_FAILED;
	} else {
		r->exit_code = -1;
		r->signal = WTERMSIG(ws);
		r->state = VG_ST_FAILED;
	}
	return 0;
}

static int
sh_cancel(struct vg_attempt *a, int sig, struct vg_err *e)
{
	(void)e;
	if (a->pid > 0)
		(void)kill(-a->pid, sig);
	return 0;
}

static void
sh_cleanup(struct vg_attempt *a)
{
	(void)a;
}

static const struct vg_backend_ops fx_sh_backend = {
	.p = { .kind = VG_PLUGIN_BACKEND, .name = "sh" },
	.start = sh_start,
	.finish = sh_finish,
	.cancel = sh_cancel,
	.cleanup = sh_cleanup,
};

/* A manifest built by hand, with n tasks running commands cmds[i]. */
struct fx {
	char			*home;
	struct vg_manifest	 m;
	struct vg_taskset	 ts;
};

/* Makes a private home and a task set of n shell commands. */
static void
fx_init(struct fx *f, const char *const *cmds, size_t n)
{
	char tmpl[] = "/tmp/vigil-test-XXXXXX";
	size_t i;

	memset(f, 0, sizeof(*f));
	if (mkdtemp(tmpl) == NULL)
		abort();
	f->home = vg_xstrdup(tmpl);
	f->m.file = vg_xstrdup("test.yaml");
	f->m.name = vg_xstrdup("test");
	f->m.backend = vg_xstrdup("sh");
	f->m.kill_grace = 0.3;
	f->ts.v = vg_xcalloc(n, sizeof(*f->ts.v));
	f->ts.n = n;
	for (i = 0; i < n; i++) {
		f->ts.v[i].index = (int)i;
		f->ts.v[i].command.shell = vg_xstrdup(cmds[i]);
		/* By hand: the kvs helpers belong to the parser. */
		f->ts.v[i].matrix.v = vg_xcalloc(1, sizeof(struct vg_kv));
		f->ts.v[i].matrix.n = f->ts.v[i].matrix.cap = 1;
		f->ts.v[i].matrix.v[0].key = vg_xstrdup("i");
		f->ts.v[i].matrix.v[0].value = vg_xasprintf("%zu", i);
	}
}

static void
fx_release(struct fx *f)
{
	size_t i;

	for (i = 0; i < f->ts.n; i++) {
		free(f->ts.v[i].command.shell);
		f->ts.v[i].command.shell = NULL;
		free(f->ts.v[i].matrix.v[0].key);
		free(f->ts.v[i].matrix.v[0].value);
		free(f->ts.v[i].matrix.v);
	}
	free(f->ts.v);
	free(f->m.file);
	free(f->m.name);
	free(f->m.backend);
	(void)vg_rm_rf(f->home, NULL);
	free(f->home);
}

#endif

/*
 * launcher.c - the choice of the direct scheduler's launcher and the
 * plain one: an attempt is the backend's own start (vg_backend_start),
 * signalled through vg_backend_cancel, its result from vg_backend_finish
 * at once, released with vg_backend_cleanup; and what the launchers that
 * start `vigil task-exec` through a cluster's own command share
 * (vg_launch_env, vg_launch_spawn).  The srun launcher is in
 * slurm-step.c, qrsh's in gridengine-step.c; see launcher.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/log.h"
#include "common/path.h"
#include "runner/manifest/task.h"
#include "schedulers/launcher.h"

extern char **environ;


/* Starts a through the run's backend. */
static int
backend_start(struct vg_launcher *l, struct vg_attempt *a, struct vg_err *e)
{
	return vg_backend_start(l->backend, a, e);
}

/* Signals the whole attempt through its backend. */
static void
backend_signal(struct vg_launcher *l, struct vg_attempt *a, int sig)
{
	(void)l;
	(void)vg_backend_cancel(a, sig, NULL);
}

/* The backend's account of the wait status; known at once. */
static enum vg_launch_end
backend_ended(struct vg_launcher *l, struct vg_attempt *a, int ws,
    long long waited_ms, int stopping, struct vg_result *r)
{
	struct vg_err e;

	(void)l;
	(void)waited_ms;
	(void)stopping;
	vg_err_init(&e);
	if (vg_backend_finish(a, ws, r, &e) != 0) {
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof(r->reason), "%.*s",
		    (int)sizeof(r->reason) - 1, e.msg);
	}
	return VG_LAUNCH_DONE;
}

/* Releases what the backend's start made. */
static void
backend_cleanup(struct vg_launcher *l, struct vg_attempt *a)
{
	(void)l;
	vg_backend_cleanup(a);
}

const struct vg_launcher_ops vg_launcher_backend = {
	.name = "backend",
	.start = backend_start,
	/* a monitor that enforces the timeout itself finishes first */
	.slack = vg_backend_timeout_slack,
	.signal = backend_signal,
	.ended = backend_ended,
	.cleanup = backend_cleanup,
};

void
vg_launch_env(const struct vg_attempt *a, int gpus, struct vg_strv *env)
{
	size_t i;

	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "VIGIL_ATTEMPT=", 14) != 0 &&
		    strncmp(environ[i], "VIGIL_TIMEOUT=", 14) != 0 &&
		    (!gpus || !a->gpu_set || strncmp(environ[i],
		    "CUDA_VISIBLE_DEVICES=", 21) != 0))
			vg_strv_push(env, environ[i]);
	vg_strv_pushf(env, "VIGIL_ATTEMPT=%d", a->attempt);
	if (gpus && a->gpu_set)
		vg_strv_pushf(env, "CUDA_VISIBLE_DEVICES=%s", a->gpu_ids);
	if (a->timeout > 0)
		vg_strv_pushf(env, "VIGIL_TIMEOUT=%.3f", a->timeout);
}

int
vg_launch_spawn(struct vg_attempt *a, const struct vg_strv *argv,
    const struct vg_strv *env, const char *log_name, struct vg_err *e)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	pid_t pid;
	int r, log;

	/* Opened here, not by path in the child: a link planted at the log
	 * is refused, never followed. */
	log = vg_beneath_file_in(a->task_dir, 0, log_name, O_WRONLY |
	    O_CREAT | O_TRUNC, 0600, e);
	if (log < 0)
		return log;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, log, 1);
	posix_spawn_file_actions_adddup2(&fa, log, 2);
	/* The driver blocks the signals it reads through a signalfd; the
	 * executor must get them back.  Its own process group keeps a
	 * terminal's ^C away from it: vigil decides what a task gets. */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	sigaddset(&dfl, SIGUSR1);
	sigaddset(&dfl, SIGUSR2);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	r = posix_spawnp(&pid, argv->v[0], &fa, &at, argv->v, env->v);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(log);
	if (r != 0) {
		errno = r;
		return vg_err_errno(e, "running '%s'", argv->v[0]);
	}
	a->pid = pid;
	a->started = vg_now();
	return 0;
}

/* The bytes of an executor's log read for the verdict (its own lines
 * come last). */
#define LAUNCH_LOG_TAIL	8192

char *
vg_launch_log_tail(const char *task_dir)
{
	struct vg_buf b = VG_BUF_INIT;
	char buf[4096], *text;
	ssize_t n;
	off_t size;
	int fd;

	fd = vg_beneath_file_in(task_dir, 0, "step.log", O_RDONLY, 0, NULL);
	if (fd >= 0) {
		size = lseek(fd, 0, SEEK_END);
		(void)lseek(fd, size > LAUNCH_LOG_TAIL ? size -
		    LAUNCH_LOG_TAIL : 0, SEEK_SET);
		while ((n = read(fd, buf, sizeof buf)) > 0)
			vg_buf_add(&b, buf, (size_t)n);
		close(fd);
	}
	text = vg_buf_detach(&b);
	return text != NULL ? text : vg_xstrdup("");
}

enum vg_launch_end
vg_launch_ended(struct vg_attempt *a, int ws, long long waited_ms,
    int stopping, double grace, const char *who,
    int (*verdict)(const char *log, int ws, int final, struct vg_result *r),
    struct vg_result *r)
{
	struct vg_err e;
	char *log;
	int final, known;

	vg_err_init(&e);
	if (vg_result_read(a->task_dir, r, &e) == 0 &&
	    vg_state_terminal(r->state))
		/* task-exec said how the task ended: the timeout and cancel
		 * it enforced are in the record already. */
		return r->state != VG_ST_CANCELLED ? VG_LAUNCH_RECORDED :
		    VG_LAUNCH_DONE;
	final = waited_ms >= (long long)(grace * 1000.0 + 0.5) || stopping;
	log = vg_launch_log_tail(a->task_dir);
	known = verdict(log, ws, final, r);
	free(log);
	if (!known)
		return VG_LAUNCH_WAIT;
	vg_debug("direct: task %d: %s ended without a record: %s",
	    a->task->index, who, r->reason);
	return VG_LAUNCH_DONE;
}

/* Keeps the fewest CPUs one task asks (arg: int, 0 = none seen). */
static int
least_cpus_fn(long index, const struct vg_resources *r, void *arg)
{
	int *least = arg, c = r->cpus > 0 ? r->cpus : 1;

	(void)index;
	if (*least == 0 || c < *least)
		*least = c;
	return 0;
}

int
vg_launch_least_cpus(const struct vg_manifest *m)
{
	int per = 0;

	if (m != NULL)
		vg_expand_resources(m, least_cpus_fn, &per);
	return per > 0 ? per : 1;
}

/* Opens ops in l: 1 when it applies here, 0 when not, or a vg_rc. */
static int
try_open(struct vg_launcher *l, const struct vg_launcher_ops *ops,
    const struct vg_backend_ops *backend, struct vg_sched *s,
    struct vg_err *e)
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->ops = ops;
	l->backend = backend;
	rc = ops->open != NULL ? ops->open(l, s, e) : 1;
	if (rc > 0)
		s->remote = ops->remote;
	return rc;
}

/* Opens the first launcher that applies; see launcher.h.  The
 * schedulers' own (vg_schedulers[], in their order), then the backend's,
 * which always applies. */
int
vg_launcher_open(struct vg_launcher *l, const struct vg_backend_ops *backend,
    struct vg_sched *s, struct vg_err *e)
{
	size_t i;
	int rc;

	for (i = 0; vg_schedulers[i] != NULL; i++)
		if (vg_schedulers[i]->launcher != NULL && (rc = try_open(l,
		    vg_schedulers[i]->launcher, backend, s, e)) != 0)
			return rc < 0 ? rc : 0;
	rc = try_open(l, &vg_launcher_backend, backend, s, e);
	if (rc < 0)
		return rc;
	return rc > 0 ? 0 : vg_err_set(e, VG_EINVAL, "no launcher applies");
}

/* Closes the open launcher l. */
void
vg_launcher_close(struct vg_launcher *l)
{
	if (l->ops != NULL && l->ops->close != NULL)
		l->ops->close(l);
	l->priv = NULL;
}

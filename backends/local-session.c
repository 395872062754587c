/*
 * local-session.c - sessions of the local backend: the session directory
 * on this host is the sandbox, and each command is a confined process in
 * it, started exactly as a local task is (vg_local_proc_start: vigil-shim,
 * namespaces, Landlock, seccomp, limits, the cgroup), with the command's
 * directory as its task directory and the session directory as its
 * scratch directory, the two trees it may write.
 *
 * The shim writes the command's stdout and stderr to the command's
 * directory; this file follows both files while the command runs and
 * hands what appears to the caller, so output arrives as it is written.
 * The shim's pid and start time are kept in the command's directory
 * (proc), so that closing the session kills a command whose vigil died.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "backends/backend.h"
#include "backends/local.h"
#include "backends/sandbox.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"

/* How often a running command's files are read, in milliseconds. */
#define FOLLOW_MS	5

int
vg_local_session_open(struct vg_session *s, struct vg_err *e)
{
	char *work = vg_path_join(s->dir, "work");
	const char *down;
	int rc;

	if ((down = vg_local_downgrades(s->m, e)) == NULL) {
		free(work);
		return e->rc;
	}
	rc = vg_mkdir_p(work, 0700, e);
	free(work);
	if (rc != 0)
		return rc;
	/* The handle is what the host offered at the start (namespaces,
	 * seccomp): every command is confined as the first was, without
	 * probing again. */
	vg_host_caps_word(s->handle, sizeof(s->handle));
	vg_strlcpy(s->root, s->dir, sizeof(s->root));
	return 0;
}

/* Reads what was appended to fd since the last call and passes it on. */
static void
follow(const struct vg_session_cmd *c, int fd, int stream)
{
	char buf[65536];
	ssize_t n;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		(void)vg_session_output(c, -1, stream, buf, (size_t)n, NULL);
}

/* Opens a command's output file for following; -1 when it cannot. */
static int
follow_open(const char *dir, const char *name)
{
	char *p = vg_path_join(dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	return fd;
}

/* Records the shim of a command for vg_local_session_close. */
static void
note_proc(const struct vg_session_cmd *c, const struct vg_attempt *a)
{
	char *p = vg_path_join(c->dir, "proc"), line[64];
	int n = snprintf(line, sizeof(line), "%ld %llu\n", (long)a->pid,
	    a->pid_start);

	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0) {
		(void)vg_write_all(fd, line, (size_t)n);
		close(fd);
	}
	free(p);
}

int
vg_local_session_follow(int pidfd, const struct vg_session_cmd *c,
    double started, void (*signal)(void *arg, int sig), void *arg,
    int *why, int *sig, struct vg_err *e)
{
	struct pollfd pfd;
	double deadline = 0, kill_at = 0, now;
	int rc = 0, fo, fe;

	*why = *sig = 0;
	fo = follow_open(c->dir, "stdout");
	fe = follow_open(c->dir, "stderr");
	if (c->timeout > 0)
		deadline = started + c->timeout;
	pfd.fd = pidfd;
	pfd.events = POLLIN;
	for (;;) {
		pfd.revents = 0;
		if (poll(&pfd, 1, FOLLOW_MS) < 0 && errno != EINTR) {
			rc = vg_err_errno(e, "waiting for job %s", c->job);
			break;
		}
		/* Opened late when the process had not made them yet. */
		if (fo < 0)
			fo = follow_open(c->dir, "stdout");
		if (fe < 0)
			fe = follow_open(c->dir, "stderr");
		follow(c, fo, 1);
		follow(c, fe, 2);
		if (pfd.revents != 0)
			break;
		now = vg_now();
		if (*why == 0 && ((deadline > 0 && now >= deadline) ||
		    (c->stop != NULL && *c->stop))) {
			*why = deadline > 0 && now >= deadline ?
			    VG_ST_TIMEOUT : VG_ST_CANCELLED;
			*sig = SIGTERM;
			kill_at = now + (c->kill_grace > 0 ? c->kill_grace : 0);
		} else if (*why != 0 && *sig != SIGKILL && now >= kill_at) {
			*sig = SIGKILL;
		} else {
			continue;
		}
		signal(arg, *sig);
	}
	if (rc != 0)
		signal(arg, SIGKILL);
	if (fo >= 0)
		close(fo);
	if (fe >= 0)
		close(fe);
	return rc;
}

/* What a confined command's signal callback needs. */
struct run_kill {
	struct vg_attempt	*a;
	struct vg_local_proc	*lp;
	void			(*kill_tree)(void *arg, int sig);
	void			*arg;
};

/* Signals a confined command: its other processes first, then its tree. */
static void
run_signal(void *arg, int sig)
{
	struct run_kill *k = arg;

	if (k->kill_tree != NULL)
		k->kill_tree(k->arg, sig);
	(void)vg_local_proc_signal(k->a, k->lp, sig, NULL);
}

void
vg_local_session_settle(struct vg_result *r, int why, int sig)
{
	if (why == 0)
		return;
	r->state = (enum vg_state)why;
	snprintf(r->reason, sizeof(r->reason), "%s; its processes were sent "
	    "%s", why == VG_ST_TIMEOUT ? "timed out" : "stopped",
	    sig == SIGKILL ? "SIGKILL" : "SIGTERM");
}

int
vg_local_session_run(struct vg_attempt *a, char *const argv[],
    char *const envp[], enum vg_local_confine how,
    const struct vg_session_cmd *c,
    void (*kill_tree)(void *arg, int sig), void *arg, struct vg_result *r,
    struct vg_err *e)
{
	struct run_kill k = { .a = a, .kill_tree = kill_tree, .arg = arg };
	int rc, ws = 0, why, sig;

	memset(r, 0, sizeof(*r));
	if ((rc = vg_local_proc_start(a, argv, envp, how, &k.lp, e)) != 0)
		return rc;
	note_proc(c, a);
	rc = vg_local_session_follow(a->pidfd, c, a->started, run_signal, &k,
	    &why, &sig, e);
	while (waitpid(a->pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (rc == 0) {
		(void)vg_local_proc_finish(a, k.lp, ws, r, NULL);
		vg_local_session_settle(r, why, sig);
	}
	if (a->pidfd >= 0)
		close(a->pidfd);
	a->pidfd = -1;
	vg_local_proc_free(k.lp);
	return rc;
}

int
vg_local_session_exec(const struct vg_session *s,
    const struct vg_session_cmd *c, struct vg_result *r, struct vg_err *e)
{
	static const char *const keep[] = { "TMPDIR", "VIGIL_TASK_DIR",
	    "VIGIL_JOB", NULL };
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	struct vg_session_cmd lc = *c;
	struct vg_attempt a;
	struct vg_task t;
	int rc;

	/* The session directory is a path of this host: vigil renames
	 * the saved state itself. */
	lc.commit_here = 1;
	/* The shim's pid (proc) is what stops the tree. */
	lc.tree_held = 1;
	(void)vg_host_caps_keep(s->handle);
	memset(&a, 0, sizeof(a));
	memset(&t, 0, sizeof(t));
	t.env = s->m->env;
	a.m = s->m;
	a.task = &t;
	a.run_id = s->id;
	a.task_dir = c->dir;
	a.scratch_dir = s->dir;
	a.attempt = 1;
	a.res = s->m->resources;
	a.timeout = c->timeout;
	a.kill_grace = c->kill_grace;
	a.pidfd = -1;
	a.ops = &vg_backend_local;
	vg_session_script(s->root, &lc, c->stdin_path, keep, &argv);
	vg_attempt_env(&a, &env);
	vg_strv_pushf(&env, "VIGIL_SESSION_ID=%s", s->id);
	vg_strv_pushf(&env, "VIGIL_SESSION_DIR=%s", s->dir);
	vg_strv_pushf(&env, "VIGIL_JOB=%s", c->job);
	rc = vg_local_session_run(&a, argv.v, env.v, VG_LOCAL_ISOLATION, &lc,
	    NULL, NULL, r, e);
	if (rc == 0)
		rc = vg_session_commit(s, &lc, r, e);
	vg_strv_release(&argv);
	vg_strv_release(&env);
	return rc;
}

int
vg_local_session_close(const struct vg_session *s, struct vg_err *e)
{
	char *cmds = vg_path_join(s->dir, "cmds"), *p;
	struct vg_buf b = VG_BUF_INIT;
	unsigned long long start;
	struct dirent *d;
	DIR *dir;
	long pid;

	(void)e;
	if ((dir = opendir(cmds)) == NULL) {
		free(cmds);
		return 0;
	}
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		p = vg_xasprintf("%s/%s/proc", cmds, d->d_name);
		vg_buf_reset(&b);
		if (vg_read_file(p, 64, &b, NULL) == 0 &&
		    sscanf(vg_buf_str(&b), "%ld %llu", &pid, &start) == 2 &&
		    pid > 0 && vg_proc_alive((pid_t)pid, start))
			(void)kill((pid_t)pid, SIGKILL);
		free(p);
	}
	closedir(dir);
	vg_buf_release(&b);
	free(cmds);
	return 0;
}

/*
 * local-session.c - sessions of the local backend: the session directory
 * on this host is the sandbox, and each command is a confined process in
 * it, started exactly as a local task is (vg_local_proc_start: vigil-shim,
 * namespaces, Landlock, seccomp, limits, the cgroup), with the command's
 * directory as its task directory and the session directory as its
 * scratch directory, the two trees it may write.
 *
 * The command's stdout and stderr are pipes to this process, which
 * appends what comes to the whole files in the command's directory (made
 * at the first byte: a quiet command makes no file) and hands it to the
 * caller, so output arrives as it is written.  (Other backends whose
 * processes write files of this host, apptainer, are followed by
 * reading those files: vg_local_session_follow.)  The shim's pid and
 * start time are a line of the job's record ("proc"), so that closing
 * the session kills a command whose vigil died; since the command can
 * write that record, only a live vigil-shim of that pid and start time
 * is killed (vg_proc_runs).
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
#include "backends/egress-run.h"
#include "backends/local.h"
#include "backends/sandbox.h"
#include "common/beneath.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"

/* How often a running command's files are read, in milliseconds. */
#define FOLLOW_MS	5

/* Whether the session's commands go out through an egress proxy (an
 * allow-list), which lives as long as the session: its state and its
 * records are files of vigil's next to the session directory, out of
 * the commands' reach (they write only the session directory). */
static int
egress_paths(const struct vg_session *s, char **state, char **log)
{
	if (s->m->isolation.level == VG_ISO_NONE ||
	    vg_isolation_net(&s->m->isolation) != VG_NET_ALLOW)
		return 0;
	*state = vg_xasprintf("%s.egress", s->dir);
	*log = vg_xasprintf("%s.egress.jsonl", s->dir);
	return 1;
}

int
vg_local_session_open(struct vg_session *s, struct vg_err *e)
{
	char *work = vg_path_join(s->dir, "work"),
	    *tmp = vg_path_join(s->dir, "tmp"), *state, *log;
	const char *down;
	int rc;

	vg_local_for_session();
	if ((down = vg_local_downgrades(s->m, e)) == NULL) {
		free(work);
		free(tmp);
		return e->rc;
	}
	if ((rc = vg_mkdir_p(work, 0700, e)) == 0)
		rc = vg_mkdir_p(tmp, 0700, e);
	free(work);
	free(tmp);
	if (rc != 0)
		return rc;
	if (egress_paths(s, &state, &log)) {
		rc = vg_egress_session_start(&s->m->isolation.network, state,
		    log, e);
		free(state);
		free(log);
		if (rc != 0)
			return rc;
	}
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

/* Opens a command's output file for following; -1 when it cannot.
 * Every command of the session can write the session's directory, its
 * cmds/JOB included: the file is opened beneath the session directory,
 * no link followed (common/beneath.h). */
static int
follow_open(const char *dir, const char *name)
{
	return vg_beneath_file_in(dir, 2, name, O_RDONLY, 0, NULL);
}

/* Records the shim of a command for vg_local_session_close: a line of
 * the job's record (which the runner made). */
static void
note_proc(const struct vg_session_cmd *c, const struct vg_attempt *a)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "proc %ld %llu\n", (long)a->pid,
	    a->pid_start);
	int fd = vg_beneath_file_in(c->dir, 2, VG_SESSION_JOB_FILE, O_WRONLY |
	    O_APPEND, 0, NULL);

	if (fd >= 0) {
		(void)vg_write_all(fd, line, (size_t)n);
		close(fd);
	}
}

/* A command's output pipe (read end) and its whole file, made when the
 * first byte comes: a command without output leaves no file. */
struct pipe_out {
	int		 fd;		/* read end; -1 at its end */
	int		 file;		/* -1 until made */
	int		 stream;	/* 1 or 2 */
	const char	*name;
};

/* Moves what pipe o holds to its file and to the caller, until the pipe
 * is empty (O_NONBLOCK) or ended; returns -1 when the file fails. */
static int
pump(const struct vg_session_cmd *c, struct pipe_out *o, struct vg_err *e)
{
	char buf[65536];
	ssize_t n;

	while (o->fd >= 0) {
		if ((n = read(o->fd, buf, sizeof(buf))) < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			close(o->fd);
			o->fd = -1;
			return 0;
		}
		/* The command runs on and can write its job directory:
		 * beneath the session directory, no link followed. */
		if (o->file < 0 && (o->file = vg_beneath_file_in(c->dir, 2,
		    o->name, O_WRONLY | O_CREAT | O_APPEND, 0600, e)) < 0) {
			o->file = -1;
			return -1;
		}
		if (vg_session_output(c, o->file, o->stream, buf, (size_t)n,
		    e) != 0)
			return -1;
	}
	return 0;
}

/*
 * The loop of a running command: waits for pidfd, passing on output
 * (from pipes o[0] and o[1] when o is not NULL, else from the stdout
 * and stderr files the process writes in c->dir), signals by the
 * timeout and c->stop; fills *why and *sig as vg_local_session_follow.
 */
static int
follow_loop(int pidfd, const struct vg_session_cmd *c, double started,
    struct pipe_out *o, void (*signal)(void *arg, int sig), void *arg,
    int *why, int *sig, struct vg_err *e)
{
	struct pollfd pfd[3];
	double deadline = 0, kill_at = 0, now;
	int rc = 0, fo = -1, fe = -1, np, i, ended;

	*why = *sig = 0;
	if (o == NULL) {
		fo = follow_open(c->dir, "stdout");
		fe = follow_open(c->dir, "stderr");
	}
	if (c->timeout > 0)
		deadline = started + c->timeout;
	for (;;) {
		pfd[0].fd = pidfd;
		pfd[0].events = POLLIN;
		np = 1;
		for (i = 0; o != NULL && i < 2; i++)
			if (o[i].fd >= 0) {
				pfd[np].fd = o[i].fd;
				pfd[np++].events = POLLIN;
			}
		for (i = 0; i < np; i++)
			pfd[i].revents = 0;
		/* Pipes wake the poll; files are looked at every FOLLOW_MS. */
		if (poll(pfd, (nfds_t)np, o != NULL && deadline == 0 &&
		    c->stop == NULL ? -1 : FOLLOW_MS) < 0 && errno != EINTR) {
			rc = vg_err_errno(e, "waiting for job %s", c->job);
			break;
		}
		ended = pfd[0].revents != 0;
		if (o != NULL) {
			for (i = 0; i < 2 && rc == 0; i++)
				rc = pump(c, &o[i], e);
			if (rc != 0)
				break;
		} else {
			/* Opened late when the process had not made them. */
			if (fo < 0)
				fo = follow_open(c->dir, "stdout");
			if (fe < 0)
				fe = follow_open(c->dir, "stderr");
			follow(c, fo, 1);
			follow(c, fe, 2);
		}
		if (ended)
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

int
vg_local_session_follow(int pidfd, const struct vg_session_cmd *c,
    double started, void (*signal)(void *arg, int sig), void *arg,
    int *why, int *sig, struct vg_err *e)
{
	return follow_loop(pidfd, c, started, NULL, signal, arg, why, sig, e);
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
	struct pipe_out o[2] = {
		{ .fd = -1, .file = -1, .stream = 1, .name = "stdout" },
		{ .fd = -1, .file = -1, .stream = 2, .name = "stderr" },
	};
	int rc, ws = 0, why, sig, i, pp[2];

	memset(r, 0, sizeof(*r));
	/* Output through pipes: it arrives as it is written, and the
	 * files are made only for a stream that has bytes. */
	a->out_set = 1;
	a->out_fd[0] = a->out_fd[1] = -1;
	for (i = 0; i < 2; i++) {
		if (pipe2(pp, O_CLOEXEC) != 0) {
			rc = vg_err_errno(e, "cannot make the output pipes");
			goto out;
		}
		o[i].fd = pp[0];
		a->out_fd[i] = pp[1];
		(void)fcntl(o[i].fd, F_SETFL, O_NONBLOCK);
	}
	rc = vg_local_proc_start(a, argv, envp, how, &k.lp, e);
	for (i = 0; i < 2; i++) {
		close(a->out_fd[i]);
		a->out_fd[i] = -1;
	}
	if (rc != 0)
		goto out;
	note_proc(c, a);
	rc = follow_loop(a->pidfd, c, a->started, o, run_signal, &k, &why,
	    &sig, e);
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
out:
	for (i = 0; i < 2; i++) {
		if (o[i].fd >= 0)
			close(o[i].fd);
		if (o[i].file >= 0)
			close(o[i].file);
		if (a->out_fd[i] >= 0)
			close(a->out_fd[i]);
	}
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
	char *tmp = vg_path_join(s->dir, "tmp"), *state, *log;
	int rc;

	/* The session directory is a path of this host: vigil renames
	 * the saved state itself. */
	lc.commit_here = 1;
	/* The shim's pid (proc) is what stops the tree. */
	lc.tree_held = 1;
	vg_local_for_session();
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
	/* One TMPDIR for the session, as a shell keeps its /tmp: what a
	 * command leaves there the next finds (the session directory is
	 * writable to each command anyway). */
	a.tmp_dir = tmp;
	vg_session_script(s->root, &lc, c->stdin_path, keep, &argv);
	vg_attempt_env(&a, &env);
	vg_strv_pushf(&env, "VIGIL_SESSION_ID=%s", s->id);
	vg_strv_pushf(&env, "VIGIL_SESSION_DIR=%s", s->dir);
	vg_strv_pushf(&env, "VIGIL_JOB=%s", c->job);
	rc = 0;
	if (egress_paths(s, &state, &log)) {
		struct vg_egress_run *eg = vg_local_egress();

		rc = vg_egress_session_attach(state, log, eg, e);
		eg->job = atoi(c->job);
		free(state);
		free(log);
	}
	if (rc == 0)
		rc = vg_local_session_run(&a, argv.v, env.v,
		    VG_LOCAL_ISOLATION, &lc, NULL, NULL, r, e);
	vg_egress_run_detach(vg_local_egress());
	if (rc == 0)
		rc = vg_session_commit(s, &lc, r, e);
	vg_strv_release(&argv);
	vg_strv_release(&env);
	free(tmp);
	return rc;
}

int
vg_local_session_close(const struct vg_session *s, struct vg_err *e)
{
	char *cmds = vg_path_join(s->dir, "cmds"), *p, *line, *state, *log;
	struct vg_buf b = VG_BUF_INIT;
	unsigned long long start;
	struct dirent *d;
	DIR *dir;
	long pid;

	(void)e;
	if (egress_paths(s, &state, &log)) {
		vg_egress_session_stop(state);
		free(state);
		free(log);
	}
	if ((dir = opendir(cmds)) == NULL) {
		free(cmds);
		return 0;
	}
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		p = vg_xasprintf("%s/%s", cmds, d->d_name);
		vg_buf_reset(&b);
		/* The shim's line, appended after the runner's. */
		if (vg_beneath_read(p, 2, VG_SESSION_JOB_FILE, (size_t)4 << 20,
		    &b, NULL) == 0 &&
		    (line = strstr(vg_buf_str(&b), "\nproc ")) != NULL &&
		    sscanf(line + 6, "%ld %llu", &pid, &start) == 2 &&
		    pid > 0 && vg_proc_runs((pid_t)pid, start,
		    vg_local_shim(NULL, 0)))
			(void)kill((pid_t)pid, SIGKILL);
		free(p);
	}
	closedir(dir);
	vg_buf_release(&b);
	free(cmds);
	return 0;
}

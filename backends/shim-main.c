/*
 * shim-main.c - vigil-shim, the first process of every local task (see
 * shim.h for how it is started and what it is given, local.c for the
 * process layout).
 *
 * It reads the launch description from fd 3, becomes the task's
 * supervisor (init of the task's PID namespace, or a child subreaper
 * where there is none), applies no_new_privs, Landlock and seccomp, and
 * starts the task with vfork(2)+execve(2) in a session of its own, with
 * its own argv and environment.  Then it forwards the signals vigil sends
 * to the whole tree, reaps orphans, and when the task ends kills whatever
 * is left and exits, reporting the task's exact wait status and the
 * rusage of everything it reaped on fd 3.
 *
 * Built static and without vigil's libraries, so that its exec costs
 * little (mk/shim.mk; the Makefile keeps this file out of libvigil).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc.h"
#include "backends/shim.h"
#include "common/str.h"

/* The launch description, aligned for in-place reading; one byte more
 * than the largest accepted, to notice a larger one. */
static union {
	struct vg_shim_launch	l;
	char			b[VG_SHIM_MAX_SIZE + 8];
} in;

/* Signals the shim passes on to the whole tree. */
static const int forwarded[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
	SIGCONT, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU,
};

/* Written by the vfork child, read by the shim (shared memory). */
static volatile int exec_errno;

/* Set when the shim created the task's temp directory and removed it
 * again after the task (an empty one: the usual case). */
static int tmp_gone;

/* Where reports go: fd 3, or an executor's task's report socket. */
static int report_fd = VG_SHIM_FD_CTL;

/* An executor's usage of the task being run (what its reaped processes
 * used), reported instead of getrusage(RUSAGE_CHILDREN). */
static struct rusage task_ru;
static int task_ru_on;

/* The usage of everything the shim reaped; an executor's, of the task
 * being run alone.  0, or -1 with errno. */
static int
tree_usage(struct rusage *ru)
{
	if (!task_ru_on)
		return getrusage(RUSAGE_CHILDREN, ru);
	*ru = task_ru;
	return 0;
}

/* Sends one report on the control socket (one message: atomic). */
static void
report(int kind, int err, const char *stage, const char *detail, int ws)
{
	struct vg_shim_msg msg;
	struct rusage ru;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.kind = kind;
	msg.err = err;
	msg.wstatus = ws;
	msg.tmp_gone = tmp_gone;
	(void)vg_strlcpy(msg.stage, stage, sizeof(msg.stage));
	(void)vg_strlcpy(msg.detail, detail, sizeof(msg.detail));
	if (kind == VG_SHIM_DONE && tree_usage(&ru) == 0) {
		msg.utime_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
		    (uint64_t)ru.ru_utime.tv_usec;
		msg.stime_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
		    (uint64_t)ru.ru_stime.tv_usec;
		msg.maxrss_kb = (uint64_t)ru.ru_maxrss;
	}
	do
		n = send(report_fd, &msg, sizeof(msg), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

/* Reports and exits with the task's status (or 127 when it never ran). */
static void __attribute__((noreturn))
shim_exit(int kind, int err, const char *stage, int ws)
{
	report(kind, err, stage, NULL, ws);
	if (kind != VG_SHIM_DONE)
		_exit(127);
	if (WIFEXITED(ws))
		_exit(WEXITSTATUS(ws));
	_exit(128 + WTERMSIG(ws));
}

/* Parses a decimal pid; returns 0 when there is none. */
static pid_t
parse_pid(const char **pp)
{
	const char *p = *pp;
	pid_t v = 0;

	while (*p == ' ' || *p == '\n')
		p++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	*pp = p;
	return v;
}

/*
 * Subreaper mode: signals every descendant of the shim, walking the
 * children lists breadth first.  Orphans were reparented to the shim, so
 * they are found as its children.
 */
static void
signal_descendants(int sig)
{
	static pid_t queue[4096];
	char path[64], buf[4096];
	size_t head = 0, tail = 0;
	const char *p;
	pid_t pid;
	ssize_t n;
	int fd;

	queue[tail++] = getpid();
	while (head < tail) {
		pid = queue[head++];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
		    (int)pid, (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (p = buf; (pid = parse_pid(&p)) > 0; ) {
			kill(pid, sig);
			if (tail < sizeof(queue) / sizeof(queue[0]))
				queue[tail++] = pid;
		}
	}
}

/* Sends sig to every process of the task tree but the shim. */
static void
signal_tree(pid_t task, int sig)
{
	if (in.l.flags & VG_SHIM_PIDNS) {
		/* From a namespace's init, -1 means every other process
		 * of the namespace. */
		kill(-1, sig);
		return;
	}
	kill(-task, sig);
	signal_descendants(sig);
}

/* Does nothing: a handler makes the kernel deliver signals to a
 * namespace init, which ignores signals left at SIG_DFL. */
static void
noop_handler(int sig)
{
	(void)sig;
}

/* The value of PATH in envp, or the default execvp(3) would use. */
static const char *
env_path(char *const *envp)
{
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			return envp[i] + 5;
	return "/usr/local/bin:/usr/bin:/bin";
}

/* Execs argv[0], searching PATH as execvp(3) does when it has no '/'.
 * Only reached when vigil could not resolve the name (or its answer went
 * stale). */
static void
exec_search(char *const *argv, char *const *envp)
{
	const char *name = argv[0], *p, *end;
	char buf[PATH_MAX];
	size_t nlen, dlen;
	int saw_eacces = 0;

	if (name == NULL || name[0] == '\0') {
		errno = ENOENT;
		return;
	}
	if (strchr(name, '/') != NULL) {
		execve(name, argv, envp);
		return;
	}
	nlen = strlen(name);
	for (p = env_path(envp); ; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		dlen = (size_t)(end - p);
		if (dlen == 0) {
			buf[0] = '.';
			dlen = 1;
		} else if (dlen < sizeof(buf))
			memcpy(buf, p, dlen);
		if (dlen + 1 + nlen + 1 <= sizeof(buf)) {
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, name, nlen + 1);
			execve(buf, argv, envp);
			if (errno == EACCES)
				saw_eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR &&
			    errno != ELOOP && errno != ENAMETOOLONG)
				return;
		}
		if (*end == '\0')
			break;
	}
	errno = saw_eacces ? EACCES : ENOENT;
}

/* The task process (a vfork child of the shim, sharing its memory until
 * execve): session, directory, limits, then exec.  stdio is in place. */
static void __attribute__((noreturn))
task_main(char *const *argv, char *const *envp)
{
	const char *stage, *path, *cwd;
	struct rlimit rl;
	sigset_t none;
	uint32_t i;
	int err;

	setsid();
	cwd = vg_shim_launch_str(&in.l, in.l.cwd);
	if (cwd != NULL && chdir(cwd) != 0) {
		stage = "chdir";
		goto fail;
	}
	for (i = 0; i < in.l.nlimits; i++) {
		rl.rlim_cur = (rlim_t)in.l.limits[i].cur;
		rl.rlim_max = (rlim_t)in.l.limits[i].max;
		if (setrlimit(in.l.limits[i].resource, &rl) != 0) {
			stage = "setrlimit";
			goto fail;
		}
	}
	/* Last, after the limits (raising one may take a capability): the
	 * task holds no power of root's over the host. */
	if ((in.l.flags & (VG_SHIM_DROPCAPS | VG_SHIM_NOPTRACE)) &&
	    (err = vg_shim_drop_caps(&in.l, &stage)) != 0) {
		errno = -err;
		goto fail;
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	stage = "exec";
	/* The control socket closes at exec (FD_CLOEXEC). */
	path = vg_shim_launch_str(&in.l, in.l.exec_path);
	if (path != NULL)
		execve(path, argv, envp);
	/* Not resolved by vigil, or stale (removed, or hidden by the
	 * sandbox): the search execvp(3) would make, for its errno. */
	if (path == NULL || strchr(argv[0], '/') == NULL)
		exec_search(argv, envp);
fail:
	/* Reported from here, not only through the memory vfork shares
	 * with the shim: finish() reads the first report, this one. */
	err = errno != 0 ? errno : EINVAL;
	exec_errno = err;
	report(VG_SHIM_EXEC_FAILED, err, stage, NULL, 0);
	_exit(127);
}

/* Checks the launch of n bytes received into in (n its whole length,
 * as MSG_TRUNC gives it); 0, or -1 with the reason in why. */
static int
launch_check(size_t n, char *why, size_t whylen)
{
	if (n > sizeof(in.b) - 8) {
		snprintf(why, whylen, "launch description of %zu bytes, more "
		    "than %d", n, VG_SHIM_MAX_SIZE);
		return -1;
	}
	return vg_shim_launch_check(in.b, n, why, whylen);
}

/* Reads and checks the launch description; exits on a bad one. */
static void
read_launch(void)
{
	char why[160], line[224];
	ssize_t n;

	do
		n = recv(VG_SHIM_FD_CTL, in.b, sizeof(in.b), MSG_DONTWAIT |
		    MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		/* Named here rather than by strerror(3), whose wording
		 * depends on the C library the shim was linked with. */
		snprintf(why, sizeof(why), "no launch description on fd %d: "
		    "%s (vigil-shim is started by vigil, not by hand)",
		    VG_SHIM_FD_CTL, errno == EAGAIN ? "nothing was sent" :
		    errno == ENOTSOCK ? "not a socket" :
		    errno == EBADF ? "not open" : "cannot be read");
	} else if (launch_check((size_t)n, why, sizeof(why)) == 0)
		return;
	report(VG_SHIM_SETUP_FAILED, EINVAL, "launch", why, 0);
	/* One write, so that the line arrives whole (dprintf(3) may make
	 * several). */
	n = snprintf(line, sizeof(line), "%s: bad launch description: %s\n",
	    VG_SHIM_NAME, why);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n :
		    sizeof(line) - 1);
	_exit(127);
}

/* Makes the task's TMPDIR.  A slot of the run's pool (RUN/tmp/PID.N) has
 * a parent that the last vigil process of the run to leave removes when
 * it is empty: task-exec processes of one Slurm array on one node come
 * and go side by side, so the parent may vanish between its mkdir and
 * this one.  It is made again then (once ours is in it, nobody removes
 * it). */
static int
make_tmp(const char *dir)
{
	char parent[PATH_MAX];
	const char *slash;
	int k;

	for (k = 0; k < 5; k++) {
		if (mkdir(dir, 0700) == 0 || errno == EEXIST)
			return 0;
		if (errno != ENOENT || (slash = strrchr(dir, '/')) == NULL ||
		    slash == dir || (size_t)(slash - dir) >= sizeof(parent))
			return -1;
		memcpy(parent, dir, (size_t)(slash - dir));
		parent[slash - dir] = '\0';
		if (mkdir(parent, 0700) != 0 && errno != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * Executor mode (shim.h, "A slot's executor").  task_fd holds the
 * descriptors that came with the task being run: stdin, stdout, stderr,
 * report socket.  A launch sent while a task runs is held in held (its
 * length held_len, 0: none) with its descriptors in held_fd, until the
 * task's end is reported.
 */
static int task_fd[4] = { -1, -1, -1, -1 };
static char *task_argv[VG_SHIM_MAX_ARGV + 1];
static char *task_env[VG_SHIM_MAX_ARGV + 1];
static union {
	struct vg_shim_launch	l;
	char			b[VG_SHIM_MAX_SIZE + 8];
} held;
static size_t held_len;
static int held_fd[4] = { -1, -1, -1, -1 };

/* Closes the four descriptors in fd. */
static void
fds_close(int fd[4])
{
	int i;

	for (i = 0; i < 4; i++)
		if (fd[i] >= 0) {
			close(fd[i]);
			fd[i] = -1;
		}
}

/* Closes the descriptors of the task that ended. */
static void
task_fds_close(void)
{
	fds_close(task_fd);
}

/* Adds the usage of one reaped process to the task's. */
static void
ru_add(const struct rusage *ru)
{
	timeradd(&task_ru.ru_utime, &ru->ru_utime, &task_ru.ru_utime);
	timeradd(&task_ru.ru_stime, &ru->ru_stime, &task_ru.ru_stime);
	if (ru->ru_maxrss > task_ru.ru_maxrss)
		task_ru.ru_maxrss = ru->ru_maxrss;
}

/* Ends the executor: every process of the namespace goes with it. */
static void __attribute__((noreturn))
serve_exit(void)
{
	kill(-1, SIGKILL);
	_exit(0);
}

/*
 * Receives one launch message into buf (size bytes) and its four
 * descriptors into fd.  Returns its length; 0 when there was nothing
 * usable (nothing yet, or without its descriptors: vigil then sees the
 * socket close); -1 at end of file (vigil is gone).
 */
static ssize_t
serve_recv_msg(char *buf, size_t size, int fd[4])
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	size_t k, nfd = 0;
	ssize_t n;
	int one;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = buf;
	iov.iov_len = size;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = sizeof(cm.b);
	do
		n = recvmsg(VG_SHIM_FD_CTL, &mh, MSG_CMSG_CLOEXEC |
		    MSG_DONTWAIT | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		    k++) {
			memcpy(&one, CMSG_DATA(c) + k * sizeof(int),
			    sizeof(int));
			if (nfd < 4)
				fd[nfd++] = one;
			else
				close(one);
		}
	}
	if (nfd != 4 || (mh.msg_flags & MSG_CTRUNC)) {
		fds_close(fd);
		return 0;
	}
	return n;
}

/* Whether the launch in `in` (len bytes) with task_fd can start: 1, or 0
 * when it was refused (reported on its own socket). */
static int
serve_accept(size_t len)
{
	char why[160];

	report_fd = task_fd[3];
	if (launch_check(len, why, sizeof(why)) != 0)
		;
	else if (!(in.l.flags & VG_SHIM_SERVE) || in.l.argc == 0)
		snprintf(why, sizeof(why), "%s", "a task for an executor "
		    "needs VG_SHIM_SERVE and its argv");
	else
		return 1;
	report(VG_SHIM_SETUP_FAILED, EINVAL, "launch", why, 0);
	task_fds_close();
	return 0;
}

/*
 * Receives the next task launch and its four descriptors: the one held,
 * else one from fd 3.  Returns 1 when a task can start, 0 when there was
 * nothing usable; ends the executor at end of file.
 */
static int
serve_recv(void)
{
	ssize_t n;
	int i;

	if (held_len > 0) {
		memcpy(in.b, held.b, held_len);
		for (i = 0; i < 4; i++) {
			task_fd[i] = held_fd[i];
			held_fd[i] = -1;
		}
		n = (ssize_t)held_len;
		held_len = 0;
	} else if ((n = serve_recv_msg(in.b, sizeof(in.b), task_fd)) < 0)
		serve_exit();
	return n > 0 && serve_accept((size_t)n);
}

/* Takes a launch sent while a task runs; at end of file, returns -1. */
static int
serve_hold(void)
{
	ssize_t n = serve_recv_msg(held.b, sizeof(held.b), held_fd);

	if (n < 0)
		return -1;
	held_len = (size_t)n;
	return 0;
}

/* Drops the held launch unstarted, saying so on its socket: vigil asked
 * (a signal for it), or stopped watching it. */
static void
serve_drop(int say)
{
	if (say) {
		report_fd = held_fd[3];
		report(VG_SHIM_DROPPED, 0, "held", NULL, 0);
		report_fd = task_fd[3];
	}
	fds_close(held_fd);
	held_len = 0;
}

/* Kills what is left of the task (everything in the namespace but the
 * executor) and reaps it, adding its usage. */
static void
serve_sweep(void)
{
	struct rusage ru;
	pid_t p;
	int st;

	for (;;) {
		kill(-1, SIGKILL);
		p = wait4(-1, &st, 0, &ru);
		if (p > 0)
			ru_add(&ru);
		else if (errno != EINTR)
			break;
	}
}

/* Starts the task just received: vfork, its stdio, its confinement,
 * then task_main.  Returns its pid, or -1 with errno. */
static pid_t
serve_spawn(void)
{
	const char *stage = "setup";
	pid_t task;
	int i, rc;

	vg_shim_launch_strv(&in.l, in.l.argv_off, in.l.argc, task_argv);
	vg_shim_launch_strv(&in.l, in.l.env_off, in.l.envc, task_env);
	exec_errno = 0;
	task = vfork();
	if (task == 0) {
		for (i = 0; i < 3; i++)
			if (dup2(task_fd[i], i) < 0) {
				exec_errno = errno;
				report(VG_SHIM_SETUP_FAILED, errno, "task fds",
				    NULL, 0);
				_exit(127);
			}
		if ((rc = vg_shim_confine(&in.l, &stage)) != 0) {
			exec_errno = -rc;
			report(VG_SHIM_SETUP_FAILED, -rc, stage, NULL, 0);
			_exit(127);
		}
		task_main(task_argv, task_env);
	}
	return task;
}

/* What serve_task polls. */
enum { P_SIG, P_TASK, P_CTL, P_HELD, NPOLL };

/* Runs the task just received to its end and reports it; meanwhile
 * holds one launch sent for after it. */
static void
serve_task(int sfd)
{
	struct signalfd_siginfo ssi;
	struct vg_shim_sig sg;
	struct pollfd pfd[NPOLL];
	struct rusage ru;
	int st, tstatus = 0, done = 0, orphaned = 0, i;
	pid_t task, p;
	ssize_t n;

	memset(&task_ru, 0, sizeof(task_ru));
	task_ru_on = 1;
	tmp_gone = 0;
	if ((in.l.flags & VG_SHIM_MKTMP) &&
	    make_tmp(vg_shim_launch_str(&in.l, in.l.tmp_dir)) != 0) {
		report(VG_SHIM_SETUP_FAILED, errno, "private TMPDIR", NULL, 0);
		return;
	}
	task = serve_spawn();
	for (i = 0; i < 3; i++) {
		close(task_fd[i]);
		task_fd[i] = -1;
	}
	if (task < 0) {
		report(VG_SHIM_SETUP_FAILED, errno, "vfork", NULL, 0);
		return;
	}
	if (exec_errno != 0) {
		/* The task already reported why. */
		serve_sweep();
		return;
	}
	pfd[P_SIG].fd = sfd;
	pfd[P_TASK].fd = task_fd[3];
	pfd[P_CTL].fd = VG_SHIM_FD_CTL;
	pfd[P_SIG].events = pfd[P_TASK].events = pfd[P_HELD].events = POLLIN;
	while (!done) {
		/* fd 3: a launch for after this task while none is held,
		 * else only its end (vigil gone). */
		pfd[P_CTL].events = held_len == 0 && !orphaned ? POLLIN : 0;
		pfd[P_HELD].fd = held_len > 0 ? held_fd[3] : -1;
		if (poll(pfd, NPOLL, -1) < 0)
			continue;
		if ((pfd[P_CTL].revents & POLLIN) && serve_hold() != 0)
			pfd[P_CTL].revents |= POLLHUP;
		if (pfd[P_CTL].revents & (POLLHUP | POLLERR)) {
			/* vigil is gone: the task runs on, as a task of a
			 * shim of its own would (resume and cancel find it
			 * by its environment), and the executor ends with
			 * it; a held launch is never started. */
			orphaned = 1;
			pfd[P_CTL].fd = -1;
			if (held_len > 0)
				serve_drop(0);
		}
		if (pfd[P_HELD].revents) {
			/* A signal for a task that has not started (cancel),
			 * or its socket closed: it never starts. */
			serve_drop(recv(held_fd[3], &sg, sizeof(sg),
			    MSG_DONTWAIT) > 0);
		}
		if (pfd[P_TASK].revents) {
			n = recv(pfd[P_TASK].fd, &sg, sizeof(sg), MSG_DONTWAIT);
			if (n == (ssize_t)sizeof(sg) && sg.sig > 0 &&
			    sg.sig < 65)
				kill(-1, sg.sig);
			else if (n == 0 || (n < 0 && errno != EAGAIN &&
			    errno != EINTR))
				/* Closed: by a vigil that died (fd 3 will
				 * say) or that stopped watching. */
				pfd[P_TASK].fd = -1;
		}
		if (pfd[P_SIG].revents) {
			while (read(sfd, &ssi, sizeof(ssi)) > 0)
				;
			while ((p = wait4(-1, &st, WNOHANG, &ru)) > 0) {
				ru_add(&ru);
				if (p == task) {
					tstatus = st;
					done = 1;
				}
			}
		}
	}
	serve_sweep();
	if ((in.l.flags & VG_SHIM_MKTMP) && !(in.l.flags & VG_SHIM_KEEPTMP) &&
	    rmdir(vg_shim_launch_str(&in.l, in.l.tmp_dir)) == 0)
		tmp_gone = 1;
	report(VG_SHIM_DONE, 0, "", NULL, tstatus);
	if (orphaned)
		serve_exit();
}

/* The executor's loop: one task at a time until vigil closes fd 3, the
 * one held first. */
static void __attribute__((noreturn))
serve(void)
{
	struct pollfd pfd;
	sigset_t chld;
	int sfd;

	if (!(in.l.flags & VG_SHIM_PIDNS))
		shim_exit(VG_SHIM_SETUP_FAILED, EINVAL, "executor without "
		    "a PID namespace", 0);
	/* Not dumpable since main's start: not to be looked into by the
	 * tasks beside it (its memory and descriptors through /proc/1,
	 * ptrace); each task's exec makes the task dumpable again. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if ((sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		shim_exit(VG_SHIM_SETUP_FAILED, errno, "signalfd", 0);
	pfd.fd = VG_SHIM_FD_CTL;
	pfd.events = POLLIN;
	for (;;) {
		if (held_len == 0 && poll(&pfd, 1, -1) < 0)
			continue;
		if (serve_recv() == 1)
			serve_task(sfd);
		task_fds_close();
		report_fd = VG_SHIM_FD_CTL;
	}
}

int
main(int argc, char **argv, char **envp)
{
	struct sigaction sa;
	siginfo_t si;
	sigset_t wait;
	const char *stage = "setup";
	int keep[VG_SHIM_MAX_RULES], sig, st, tstatus = 0, rc;
	uint32_t i;
	pid_t task, p;

	/* vigil starts us with every signal blocked; they stay blocked
	 * here and are taken with sigwaitinfo.  Blocked again all the
	 * same: a SIGCHLD taken by the handler instead would leave the
	 * shim waiting for ever. */
	sigfillset(&wait);
	sigprocmask(SIG_SETMASK, &wait, NULL);
	/* Out of the task's reach from the start: a process that is not
	 * dumpable can be traced, have its memory read (/proc/1/mem,
	 * process_vm_readv) or its descriptors taken (pidfd_getfd,
	 * /proc/1/fd) only by a holder of CAP_SYS_PTRACE, which the task
	 * has not (vg_shim_drop_caps).  Its report channel, fd 3, stays
	 * the shim's alone.  The task's execve makes the task dumpable
	 * again, for itself. */
	(void)prctl(PR_SET_DUMPABLE, 0);
	read_launch();
	if (argc < 1 || argv[0] == NULL) {
		report(VG_SHIM_SETUP_FAILED, EINVAL, "launch", "no command",
		    0);
		_exit(127);
	}
	/* Nothing of vigil's but what the launch names; and none of it
	 * for the task. */
	for (i = 0; i < in.l.nrules; i++)
		keep[i] = in.l.rules[i].fd;
	vg_close_from(VG_SHIM_FD_FIRST_RULE, keep, (int)in.l.nrules);
	vg_fd_cloexec(VG_SHIM_FD_CTL);
	for (i = 0; i < in.l.nrules; i++)
		vg_fd_cloexec(keep[i]);

	if (!(in.l.flags & VG_SHIM_PIDNS) &&
	    prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		shim_exit(VG_SHIM_SETUP_FAILED, errno, "subreaper", 0);
	setsid();

	/* Default dispositions for the standard signals (nothing stays
	 * ignored across exec), a no-op handler for what is forwarded. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&wait);
	for (sig = 1; sig < 32; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa.sa_handler = SIG_DFL;
		if (sig == SIGCHLD) {
			sa.sa_handler = noop_handler;
			sigaddset(&wait, sig);
		}
		sigaction(sig, &sa, NULL);
	}
	sa.sa_handler = noop_handler;
	if (in.l.killall_sig > 0) {
		sigaction(in.l.killall_sig, &sa, NULL);
		sigaddset(&wait, in.l.killall_sig);
	}
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigaddset(&wait, forwarded[i]);
	}

	if (in.l.flags & VG_SHIM_SERVE)
		serve();

	/* Made here rather than in vigil, in parallel with it: a mkdir
	 * costs as much as the rest of a task start on some file systems. */
	if ((in.l.flags & VG_SHIM_MKTMP) &&
	    make_tmp(vg_shim_launch_str(&in.l, in.l.tmp_dir)) != 0)
		shim_exit(VG_SHIM_SETUP_FAILED, errno, "private TMPDIR", 0);
	if ((rc = vg_shim_confine(&in.l, &stage)) != 0)
		shim_exit(VG_SHIM_SETUP_FAILED, -rc, stage, 0);

	exec_errno = 0;
	task = vfork();
	if (task == 0)
		task_main(argv, envp);
	if (task < 0)
		shim_exit(VG_SHIM_SETUP_FAILED, errno, "vfork", 0);
	if (exec_errno != 0) {
		/* The task already reported why; just end. */
		while (waitpid(task, &st, 0) < 0 && errno == EINTR)
			;
		_exit(127);
	}

	for (;;) {
		sig = sigwaitinfo(&wait, &si);
		if (sig < 0)
			continue;
		if (sig == SIGCHLD) {
			int done = 0;

			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				if (p == task) {
					tstatus = st;
					done = 1;
				}
			if (done)
				break;
		} else if (sig == in.l.killall_sig)
			signal_tree(task, SIGKILL);
		else
			signal_tree(task, sig);
	}

	/* The task ended: nothing of it may outlive it.  A namespace init
	 * exiting takes the namespace with it; a subreaper has to kill and
	 * reap every descendant itself, until none is left. */
	if (!(in.l.flags & VG_SHIM_PIDNS)) {
		for (;;) {
			signal_descendants(SIGKILL);
			p = waitpid(-1, &st, 0);
			if (p < 0 && errno == ECHILD)
				break;
		}
	}
	/* Usually empty; vigil removes what is left otherwise.  (Landlock
	 * allows it: tmp_dir is beneath a writable directory.) */
	if ((in.l.flags & VG_SHIM_MKTMP) && !(in.l.flags & VG_SHIM_KEEPTMP) &&
	    rmdir(vg_shim_launch_str(&in.l,
	    in.l.tmp_dir)) == 0)
		tmp_gone = 1;
	shim_exit(VG_SHIM_DONE, 0, "", tstatus);
}

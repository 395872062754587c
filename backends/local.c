/*
 * local.c - the local backend: runs each attempt as a process tree on
 * this host, confined by the kernel (sandbox.c), with its output streamed
 * straight into files in the task directory.
 *
 * Process layout of one attempt:
 *
 *   vigil ── shim ── task (sh -c ..., or the argv) ── its children ...
 *
 * The shim is created with clone3(2) as the init of a new PID namespace,
 * with a mount namespace for a /proc of its own (plus a network namespace
 * and a private /tmp for `strict`, a user namespace when not root).  It
 * enters the sandbox, starts the task with vfork(2)+execve(2) in a session of its
 * own, forwards the signals vigil sends it to every process of the
 * namespace, reaps orphans, and when the task ends kills whatever is left
 * (daemons that called setsid or double-forked cannot escape a PID
 * namespace) and exits, reporting the task's exact wait status through a
 * pipe.  SIGKILL to the shim is enough to end the whole tree: the kernel
 * kills every process of a namespace whose init dies.  Where no PID
 * namespace can be made (no root, user namespaces off), the shim is a
 * child subreaper instead and walks /proc/PID/task/TID/children to signal
 * the tree.  docs/isolation.md has the measurements behind this.
 *
 * The scheduler watches the shim (a->pid, a->pidfd) and reaps it; finish()
 * reads the shim's report.  Output never passes through vigil: the task's
 * stdout and stderr are the files themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../runner/path.h"
#include "../runner/proc.h"
#include "backend.h"
#include "local.h"
#include "sandbox.h"

/* What the shim reports through the status pipe (one write, atomic). */
enum shim_kind {
	SHIM_DONE = 1,		/* the task ran; wstatus is its status */
	SHIM_EXEC_FAILED,	/* the task could not be started */
	SHIM_SETUP_FAILED,	/* the sandbox could not be set up */
};

struct shim_msg {
	int	kind;
	int	err;		/* errno */
	int	wstatus;
	char	stage[40];
};

#define MAX_LIMITS	6

/* Everything the child needs, built before clone3 (the child only makes
 * system calls).  Lives on the parent's stack; the child has a copy. */
struct launch {
	char			**argv;
	char			**envp;
	const char		*path;		/* PATH of the task env */
	const char		*cwd;		/* NULL: inherit */
	int			 out_fd;
	int			 err_fd;
	int			 null_fd;
	int			 status_fd;	/* write end */
	int			 nlimits;
	int			 limit_res[MAX_LIMITS];
	struct rlimit		 limits[MAX_LIMITS];
	const struct vg_sandbox	*sb;
	struct vg_sandbox_paths	 paths;
	int			 pidns;
	int			 own_proc;	/* mount /proc of the new ns */
	int			 killall_sig;	/* subreaper mode: kill all */
	/* Written by the vfork child, read by the shim. */
	volatile int		 exec_errno;
	const char *volatile	 exec_stage;
};

/* Backend state of one attempt (a->priv for the local backend; held by
 * the caller for vg_local_proc_start). */
struct vg_local_proc {
	int			 status_fd;	/* read end, or -1 */
	int			 pidns;
	int			 killall_sig;
	char			*argv0;
	char			*tmp_dir;	/* private TMPDIR, or NULL */
};

/* The compiled sandbox of the current run, rebuilt when the isolation
 * section differs (compared by content, not by pointer). */
static struct {
	struct vg_sandbox	*sb;
	uint64_t		 key;
	int			 valid;
} cache;

/* Signals the shim passes on to the whole tree. */
static const int forwarded[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
	SIGCONT, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU,
};

/* FNV-1a over a string (with its terminating NUL). */
static uint64_t
fnv(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)(s != NULL ? *s : 0);
		h *= 0x100000001b3ULL;
	} while (s != NULL && *s++ != '\0');
	return h;
}

/* Hash of everything in iso that changes the compiled sandbox. */
static uint64_t
iso_key(const struct vg_isolation_conf *iso)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char num[32];
	size_t i;

	snprintf(num, sizeof(num), "%d/%d/%d", (int)iso->level, iso->required,
	    iso->network);
	h = fnv(h, num);
	h = fnv(h, iso->ptrace);
	for (i = 0; i < iso->writable.n; i++)
		h = fnv(h, iso->writable.v[i]);
	h = fnv(h, "\001");
	for (i = 0; i < iso->readable.n; i++)
		h = fnv(h, iso->readable.v[i]);
	return h;
}

/* Returns the sandbox for m, compiling it when needed; borrowed. */
static int
sandbox_for(const struct vg_manifest *m, const struct vg_sandbox **out,
    struct vg_err *e)
{
	struct vg_sandbox *sb;
	uint64_t key = iso_key(&m->isolation);
	int rc;

	if (cache.valid && cache.key == key) {
		*out = cache.sb;
		return 0;
	}
	if ((rc = vg_sandbox_new(&m->isolation, &sb, e)) != 0)
		return rc;
	vg_sandbox_free(cache.sb);
	cache.sb = sb;
	cache.key = key;
	cache.valid = 1;
	*out = sb;
	return 0;
}

const char *
vg_local_downgrades(const struct vg_manifest *m, struct vg_err *e)
{
	const struct vg_sandbox *sb;

	if (sandbox_for(m, &sb, e) != 0)
		return NULL;
	return vg_sandbox_downgrades(sb);
}

void
vg_local_reset(void)
{
	vg_sandbox_free(cache.sb);
	cache.sb = NULL;
	cache.valid = 0;
}

/* Copies a constant string into a fixed buffer (no libc: child side). */
static void
copy_str(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; src != NULL && src[i] != '\0' && i + 1 < size; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* Writes one report to the status pipe (one write: atomic). */
static void
report(struct launch *L, int kind, int err, const char *stage, int wstatus)
{
	struct shim_msg msg;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.kind = kind;
	msg.err = err;
	msg.wstatus = wstatus;
	copy_str(msg.stage, sizeof(msg.stage), stage);
	do
		n = write(L->status_fd, &msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
}

/* Sends the report and exits the shim. */
static void __attribute__((noreturn))
shim_exit(struct launch *L, int kind, int err, const char *stage,
    int wstatus)
{
	report(L, kind, err, stage, wstatus);
	if (kind != SHIM_DONE)
		_exit(127);
	if (WIFEXITED(wstatus))
		_exit(WEXITSTATUS(wstatus));
	_exit(128 + WTERMSIG(wstatus));
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

/* Writes "/proc/P/task/P/children" into buf. */
static void
children_path(char *buf, pid_t pid)
{
	char num[16], *p = buf;
	const char *s;
	int n = 0, i;

	do
		num[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	for (s = "/proc/"; *s; s++)
		*p++ = *s;
	for (i = n - 1; i >= 0; i--)
		*p++ = num[i];
	for (s = "/task/"; *s; s++)
		*p++ = *s;
	for (i = n - 1; i >= 0; i--)
		*p++ = num[i];
	for (s = "/children"; *s; s++)
		*p++ = *s;
	*p = '\0';
}

/*
 * Subreaper mode: signals every descendant of the shim, walking the
 * children lists breadth first.  Orphans were reparented to the shim, so
 * they are found as its children.  Async-signal-safe.
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
		children_path(path, pid);
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
signal_tree(struct launch *L, pid_t task, int sig)
{
	if (L->pidns) {
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

/* Execs argv[0], searching path as execvp(3) does when it has no '/'. */
static void
exec_search(struct launch *L)
{
	const char *name = L->argv[0], *p, *end;
	char buf[PATH_MAX];
	size_t nlen, dlen;
	int saw_eacces = 0;

	if (name == NULL || name[0] == '\0') {
		errno = ENOENT;
		return;
	}
	if (strchr(name, '/') != NULL) {
		execve(name, L->argv, L->envp);
		return;
	}
	nlen = strlen(name);
	for (p = L->path; ; p = end + 1) {
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
			execve(buf, L->argv, L->envp);
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
 * execve): session, stdio, directory, limits, then exec. */
static void __attribute__((noreturn))
task_main(struct launch *L)
{
	sigset_t none;
	int i;

	setsid();
	if (dup2(L->null_fd, 0) < 0 || dup2(L->out_fd, 1) < 0 ||
	    dup2(L->err_fd, 2) < 0) {
		L->exec_stage = "stdio";
		goto fail;
	}
	if (L->cwd != NULL && chdir(L->cwd) != 0) {
		L->exec_stage = "chdir";
		goto fail;
	}
	for (i = 0; i < L->nlimits; i++)
		if (setrlimit(L->limit_res[i], &L->limits[i]) != 0) {
			L->exec_stage = "setrlimit";
			goto fail;
		}
	/* The status pipe stays until exec closes it (O_CLOEXEC). */
	vg_close_from(3, &L->status_fd, 1);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	L->exec_stage = "exec";
	exec_search(L);
fail:
	/* Reported from here, not only through the memory vfork shares
	 * with the shim: some environments (valgrind) turn vfork into
	 * fork.  finish() reads the first report, this one. */
	L->exec_errno = errno != 0 ? errno : EINVAL;
	report(L, SHIM_EXEC_FAILED, L->exec_errno, L->exec_stage, 0);
	_exit(127);
}

/* The shim: init of the task's namespaces, see the top of the file.
 * Only system calls from here on. */
static void __attribute__((noreturn))
shim_main(struct launch *L)
{
	struct sigaction sa;
	siginfo_t si;
	sigset_t wait;
	const char *stage = "setup";
	const int *sbfds;
	int keep[16], nkeep = 0, nsb, i, sig, st, tstatus = 0, rc;
	pid_t task, p;

	/* Signals are blocked (start blocked them around clone3). */
	keep[nkeep++] = L->out_fd;
	keep[nkeep++] = L->err_fd;
	keep[nkeep++] = L->null_fd;
	keep[nkeep++] = L->status_fd;
	nsb = L->sb != NULL ? vg_sandbox_fds(L->sb, &sbfds) : 0;
	if (nkeep + nsb <= (int)(sizeof(keep) / sizeof(keep[0]))) {
		for (i = 0; i < nsb; i++)
			keep[nkeep++] = sbfds[i];
		vg_close_from(3, keep, nkeep);
	}

	if (L->sb != NULL &&
	    (rc = vg_sandbox_enter(L->sb, &L->paths, &stage)) != 0)
		shim_exit(L, SHIM_SETUP_FAILED, -rc, stage, 0);
	/* Without a sandbox, the same /proc of the task's PID namespace
	 * (vg_sandbox_enter mounts it otherwise): apptainer, for one, sees
	 * a "weak chroot" in the host's /proc and aborts. */
	if (L->own_proc && (rc = vg_sandbox_own_proc(&stage)) != 0)
		shim_exit(L, SHIM_SETUP_FAILED, -rc, stage, 0);
	if (!L->pidns && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		shim_exit(L, SHIM_SETUP_FAILED, errno, "subreaper", 0);
	setsid();

	/* Default dispositions for the standard signals (nothing stays
	 * ignored across exec; vigil ignores none of the real-time ones),
	 * a no-op handler for what is forwarded. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&wait);
	for (i = 1; i < 32; i++) {
		if (i == SIGKILL || i == SIGSTOP)
			continue;
		sa.sa_handler = SIG_DFL;
		if (i == SIGCHLD) {
			sa.sa_handler = noop_handler;
			sigaddset(&wait, i);
		}
		sigaction(i, &sa, NULL);
	}
	sa.sa_handler = noop_handler;
	if (L->killall_sig > 0) {
		sigaction(L->killall_sig, &sa, NULL);
		sigaddset(&wait, L->killall_sig);
	}
	for (i = 0; i < (int)(sizeof(forwarded) / sizeof(forwarded[0])); i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigaddset(&wait, forwarded[i]);
	}

	if (L->sb != NULL &&
	    (rc = vg_sandbox_confine(L->sb, &L->paths, &stage)) != 0)
		shim_exit(L, SHIM_SETUP_FAILED, -rc, stage, 0);

	L->exec_errno = 0;
	task = vfork();
	if (task == 0)
		task_main(L);
	if (task < 0)
		shim_exit(L, SHIM_SETUP_FAILED, errno, "vfork", 0);
	if (L->exec_errno != 0) {
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
		} else if (sig == L->killall_sig)
			signal_tree(L, task, SIGKILL);
		else
			signal_tree(L, task, sig);
	}

	/* The task ended: nothing of it may outlive it.  A namespace init
	 * exiting takes the namespace with it; a subreaper has to kill and
	 * reap every descendant itself, until none is left. */
	if (!L->pidns) {
		for (;;) {
			signal_descendants(SIGKILL);
			p = waitpid(-1, &st, 0);
			if (p < 0 && errno == ECHILD)
				break;
		}
	}
	shim_exit(L, SHIM_DONE, 0, "", tstatus);
}

/* Returns the value of NAME in a NULL-terminated NAME=value array, or
 * NULL. */
static const char *
env_get(char *const *env, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* Sets NAME=value in a NAME=value vector, replacing an earlier one. */
static void
env_set(struct vg_strv *env, const char *name, const char *value)
{
	size_t i, n = strlen(name);

	for (i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = vg_xasprintf("%s=%s", name, value);
			return;
		}
	vg_strv_pushf(env, "%s=%s", name, value);
}

/* Adds one rlimit to L (soft = hard = v). */
static void
add_limit(struct launch *L, int res, uint64_t v)
{
	L->limit_res[L->nlimits] = res;
	L->limits[L->nlimits].rlim_cur = (rlim_t)v;
	L->limits[L->nlimits].rlim_max = (rlim_t)v;
	L->nlimits++;
}

/* Opens (once) /dev/null for the tasks' stdin. */
static int
null_fd(struct vg_err *e)
{
	static int fd = -1;

	if (fd < 0 && (fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return vg_err_errno(e, "cannot open '/dev/null'");
	return fd;
}

/* Opens a task output file for appending. */
static int
open_output(const char *dir, const char *name, struct vg_err *e)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return vg_err_set(e, VG_EINVAL, "task directory '%s' is too "
		    "long", dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
	    0600);
	if (fd < 0)
		return vg_err_errno(e, "cannot open '%s'", path);
	return fd;
}

/* Frees the backend state of a. */
static void
local_free(struct vg_local_proc *la)
{
	if (la == NULL)
		return;
	if (la->status_fd >= 0)
		close(la->status_fd);
	free(la->argv0);
	free(la->tmp_dir);
	free(la);
}

/* True when a PID namespace (with a mount namespace for its /proc) can be
 * made without a user namespace. */
static int
tree_only_pidns(void)
{
	const struct vg_host_caps *c = vg_host_caps();

	return c->pidns && c->root;
}

/*
 * Starts argv (envp: NULL = the attempt's clean environment) for a under
 * the shim, confined as how says; see vg_local_proc_start.
 */
static int
proc_start(struct vg_attempt *a, char *const *argvp, char *const *envp,
    enum vg_local_confine how, struct vg_local_proc **out, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	const struct vg_limits *lim = &a->m->limits;
	const struct vg_sandbox *sb = NULL;
	struct vg_local_proc *la;
	struct launch L;
	sigset_t all, old;
	unsigned long long flags;
	int pipefd[2] = { -1, -1 }, rc, pidfd = -1, saved;
	size_t i;
	pid_t pid;

	*out = NULL;
	if (a->task_dir == NULL)
		return vg_err_set(e, VG_EINVAL, "attempt has no task "
		    "directory");
	if (how == VG_LOCAL_ISOLATION &&
	    (rc = sandbox_for(a->m, &sb, e)) != 0)
		return rc;

	memset(&L, 0, sizeof(L));
	L.out_fd = L.err_fd = L.status_fd = -1;
	la = vg_xcalloc(1, sizeof(*la));
	la->status_fd = -1;

	if (argvp != NULL)
		for (i = 0; argvp[i] != NULL; i++)
			vg_strv_push(&argv, argvp[i]);
	else
		vg_attempt_argv(a, &argv);
	if (argv.n == 0) {
		rc = vg_err_set(e, VG_EINVAL, "task %d has an empty command",
		    a->task != NULL ? a->task->index : 0);
		goto out;
	}
	if (envp != NULL)
		for (i = 0; envp[i] != NULL; i++)
			vg_strv_push(&env, envp[i]);
	else
		vg_attempt_env(a, &env);
	if (sb != NULL && (vg_sandbox_level(sb) != VG_ISO_NONE ||
	    a->m->isolation.level != VG_ISO_NONE)) {
		la->tmp_dir = vg_path_join(a->task_dir, "tmp");
		if (mkdir(la->tmp_dir, 0700) != 0 && errno != EEXIST) {
			rc = vg_err_errno(e, "cannot create '%s'", la->tmp_dir);
			goto out;
		}
		env_set(&env, "TMPDIR", la->tmp_dir);
	}
	la->argv0 = vg_xstrdup(argv.v[0]);

	L.argv = argv.v;
	/* A strv is NULL-terminated; an empty one has no array at all. */
	L.envp = env.v != NULL ? env.v : (char *[]){ NULL };
	L.path = env_get(env.v, "PATH");
	if (L.path == NULL)
		L.path = "/usr/local/bin:/usr/bin:/bin";
	L.cwd = how == VG_LOCAL_ISOLATION ? a->m->workdir : NULL;
	L.sb = sb;
	L.paths.task_dir = a->task_dir;
	L.paths.scratch_dir = a->scratch_dir;
	L.paths.tmp_dir = la->tmp_dir;
	if (sb != NULL) {
		L.pidns = vg_sandbox_pidns(sb);
		flags = vg_sandbox_clone_flags(sb);
	} else {
		L.pidns = tree_only_pidns();
		L.own_proc = L.pidns;
		flags = L.pidns ? CLONE_NEWPID | CLONE_NEWNS : 0;
	}
	L.killall_sig = L.pidns ? 0 : SIGRTMIN + 2;
	if (lim->cpu_time)
		add_limit(&L, RLIMIT_CPU, lim->cpu_time);
	if (lim->address_space)
		add_limit(&L, RLIMIT_AS, lim->address_space);
	if (lim->nofile)
		add_limit(&L, RLIMIT_NOFILE, lim->nofile);
	if (lim->nproc)
		add_limit(&L, RLIMIT_NPROC, lim->nproc);
	if (lim->fsize)
		add_limit(&L, RLIMIT_FSIZE, lim->fsize);
	add_limit(&L, RLIMIT_CORE, lim->core_set ? lim->core : 0);

	if ((rc = null_fd(e)) < 0)
		goto out;
	L.null_fd = rc;
	if ((L.out_fd = open_output(a->task_dir, "stdout", e)) < 0 ||
	    (L.err_fd = open_output(a->task_dir, "stderr", e)) < 0) {
		rc = e != NULL ? e->rc : VG_EIO;
		goto out;
	}
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) {
		rc = vg_err_errno(e, "cannot create a pipe");
		goto out;
	}
	L.status_fd = pipefd[1];

	/* Blocked across clone3 so that no signal reaches a vigil handler
	 * in the shim before it installs its own. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = vg_clone_pidfd(flags, &pidfd);
	if (pid == 0)
		shim_main(&L);
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		errno = saved;
		rc = vg_err_errno(e, "cannot start task %d",
		    a->task != NULL ? a->task->index : 0);
		goto out;
	}

	a->pid = pid;
	a->pidfd = pidfd;
	a->started = vg_now();
	if (vg_proc_starttime(pid, &a->pid_start) != 0)
		a->pid_start = 0;
	la->status_fd = pipefd[0];
	pipefd[0] = -1;
	la->pidns = L.pidns;
	la->killall_sig = L.killall_sig;
	*out = la;
	la = NULL;
	rc = 0;
out:
	if (L.out_fd >= 0)
		close(L.out_fd);
	if (L.err_fd >= 0)
		close(L.err_fd);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	vg_strv_release(&argv);
	vg_strv_release(&env);
	local_free(la);
	return rc;
}

/* Fills r from a wait status. */
static void
set_from_wstatus(struct vg_result *r, int ws)
{
	if (WIFEXITED(ws)) {
		r->exit_code = WEXITSTATUS(ws);
		r->signal = 0;
		r->state = r->exit_code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
		if (r->exit_code != 0)
			snprintf(r->reason, sizeof(r->reason), "exit status %d",
			    r->exit_code);
	} else if (WIFSIGNALED(ws)) {
		r->exit_code = -1;
		r->signal = WTERMSIG(ws);
		r->state = VG_ST_FAILED;
		snprintf(r->reason, sizeof(r->reason), "killed by signal %d "
		    "(%s)%s", r->signal, strsignal(r->signal),
		    WCOREDUMP(ws) ? ", core dumped" : "");
	} else {
		r->exit_code = -1;
		r->signal = 0;
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof(r->reason), "unexpected wait "
		    "status 0x%x", ws);
	}
}

int
vg_local_proc_finish(struct vg_attempt *a, struct vg_local_proc *la,
    int wstatus, struct vg_result *r, int *task_ws)
{
	struct shim_msg msg;
	ssize_t n = -1;

	if (task_ws != NULL)
		*task_ws = -1;

	memset(r, 0, sizeof(r[0]));
	r->started = a->started;
	r->ended = vg_now();
	if (la != NULL && la->status_fd >= 0) {
		do
			n = read(la->status_fd, &msg, sizeof(msg));
		while (n < 0 && errno == EINTR);
		close(la->status_fd);
		la->status_fd = -1;
	}
	if (n != (ssize_t)sizeof(msg)) {
		/* No report: the shim itself was killed (SIGKILL from
		 * cancel), which took the whole tree with it. */
		set_from_wstatus(r, wstatus);
		if (task_ws != NULL)
			*task_ws = wstatus;
		return 0;
	}
	msg.stage[sizeof(msg.stage) - 1] = '\0';
	switch (msg.kind) {
	case SHIM_DONE:
		set_from_wstatus(r, msg.wstatus);
		if (task_ws != NULL)
			*task_ws = msg.wstatus;
		break;
	case SHIM_EXEC_FAILED:
		r->state = VG_ST_FAILED;
		r->exit_code = 127;
		if (strcmp(msg.stage, "exec") == 0)
			snprintf(r->reason, sizeof(r->reason), "cannot execute "
			    "'%s': %s", la != NULL ? la->argv0 : "?",
			    strerror(msg.err));
		else if (strcmp(msg.stage, "chdir") == 0)
			snprintf(r->reason, sizeof(r->reason), "cannot change "
			    "to directory '%s': %s", a->m->workdir,
			    strerror(msg.err));
		else
			snprintf(r->reason, sizeof(r->reason), "cannot start "
			    "'%s': %s: %s", la != NULL ? la->argv0 : "?", msg.stage,
			    strerror(msg.err));
		break;
	case SHIM_SETUP_FAILED:
	default:
		r->state = VG_ST_BACKEND_ERROR;
		r->exit_code = -1;
		snprintf(r->reason, sizeof(r->reason), "sandbox setup failed "
		    "(%s): %s", msg.stage, strerror(msg.err));
		break;
	}
	return 0;
}

/* backend op: finish */
static int
local_finish(struct vg_attempt *a, int wstatus, struct vg_result *r,
    struct vg_err *e)
{
	(void)e;
	return vg_local_proc_finish(a, a->priv, wstatus, r, NULL);
}

int
vg_local_proc_signal(struct vg_attempt *a, struct vg_local_proc *la, int sig,
    struct vg_err *e)
{
	int rc;

	if (a->pid <= 0)
		return 0;
	/* SIGKILL to a namespace init kills the namespace.  A subreaper
	 * shim is asked to kill the tree, since killing it would orphan
	 * the tree instead. */
	if (sig == SIGKILL && la != NULL && !la->pidns)
		sig = la->killall_sig;
	if (a->pidfd >= 0)
		rc = vg_pidfd_send_signal(a->pidfd, sig);
	else
		rc = kill(a->pid, sig);
	if (rc != 0 && errno != ESRCH)
		return vg_err_errno(e, "cannot signal task (pid %d)",
		    (int)a->pid);
	return 0;
}

/* backend op: cancel */
static int
local_cancel(struct vg_attempt *a, int sig, struct vg_err *e)
{
	return vg_local_proc_signal(a, a->priv, sig, e);
}

void
vg_local_proc_free(struct vg_local_proc *la)
{
	/* Usually empty: one rmdir, the tree walk only when needed. */
	if (la != NULL && la->tmp_dir != NULL && rmdir(la->tmp_dir) != 0 &&
	    errno != ENOENT)
		vg_rm_rf(la->tmp_dir, NULL);
	local_free(la);
}

/* backend op: cleanup */
static void
local_cleanup(struct vg_attempt *a)
{
	vg_local_proc_free(a->priv);
	a->priv = NULL;
}

/* Waits for a->pid with a deadline, cancelling on timeout or on SIGTERM,
 * SIGINT or SIGHUP to this process.  Returns the wait status in *ws and
 * what stopped it in *why (0, VG_ST_TIMEOUT or VG_ST_CANCELLED).  Without
 * a pidfd (Linux < 5.3, valgrind) SIGCHLD on the signalfd wakes it. */
int
vg_local_proc_wait(struct vg_attempt *a, struct vg_local_proc *la, int *ws,
    int *why, struct vg_err *e)
{
	long long deadline = -1, kill_at = -1, now;
	struct pollfd pfd[2];
	sigset_t mask, old;
	int sfd, rc = 0, n, timeout, reaped = 0;
	double grace = a->kill_grace > 0 ? a->kill_grace : 10;
	pid_t p;

	*why = 0;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (a->pidfd < 0)
		sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (a->timeout > 0)
		deadline = vg_mono_ms() + (long long)(a->timeout * 1000);
	for (;;) {
		if (a->pidfd < 0) {
			p = waitpid(a->pid, ws, WNOHANG);
			if (p == a->pid) {
				reaped = 1;
				break;
			}
			if (p < 0 && errno != EINTR) {
				rc = vg_err_errno(e, "waitpid %d", (int)a->pid);
				break;
			}
		}
		now = vg_mono_ms();
		if (deadline >= 0 && now >= deadline && kill_at < 0) {
			*why = VG_ST_TIMEOUT;
			vg_local_proc_signal(a, la, SIGTERM, NULL);
			kill_at = now + (long long)(grace * 1000);
		}
		if (kill_at >= 0 && now >= kill_at) {
			vg_local_proc_signal(a, la, SIGKILL, NULL);
			kill_at = LLONG_MAX;
		}
		timeout = -1;
		if (kill_at >= 0 && kill_at != LLONG_MAX)
			timeout = (int)(kill_at - now);
		else if (kill_at < 0 && deadline >= 0)
			timeout = (int)(deadline - now);
		pfd[0].fd = sfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = a->pidfd;
		pfd[1].events = POLLIN;
		n = poll(pfd, a->pidfd >= 0 ? 2 : 1, timeout);
		if (n < 0 && errno != EINTR) {
			rc = vg_err_errno(e, "poll");
			break;
		}
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			int stop = 0;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					stop = 1;
			if (stop && kill_at < 0) {
				*why = VG_ST_CANCELLED;
				vg_local_proc_signal(a, la, SIGTERM, NULL);
				kill_at = vg_mono_ms() +
				    (long long)(grace * 1000);
			} else if (stop) {
				/* A second signal forces. */
				vg_local_proc_signal(a, la, SIGKILL, NULL);
				kill_at = LLONG_MAX;
			}
		}
		if (a->pidfd >= 0 && n > 0 &&
		    (pfd[1].revents & (POLLIN | POLLHUP)))
			break;
	}
	while (rc == 0 && !reaped && waitpid(a->pid, ws, 0) < 0) {
		if (errno != EINTR) {
			rc = vg_err_errno(e, "waitpid %d", (int)a->pid);
			break;
		}
	}
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* backend op: start */
static int
local_start(struct vg_attempt *a, struct vg_err *e)
{
	struct vg_local_proc *la;
	int rc;

	if ((rc = proc_start(a, NULL, NULL, VG_LOCAL_ISOLATION, &la, e)) != 0)
		return rc;
	a->priv = la;
	return 0;
}

int
vg_local_proc_start(struct vg_attempt *a, char *const argv[],
    char *const envp[], enum vg_local_confine how,
    struct vg_local_proc **out, struct vg_err *e)
{
	return proc_start(a, argv, envp, how, out, e);
}

/* backend op: run */
static int
local_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	int rc, ws = 0, why;

	memset(r, 0, sizeof(r[0]));
	if ((rc = local_start(a, e)) != 0)
		return rc;
	rc = vg_local_proc_wait(a, a->priv, &ws, &why, e);
	if (rc == 0)
		rc = local_finish(a, ws, r, e);
	if (rc == 0 && why != 0 && r->state != VG_ST_SUCCEEDED) {
		r->state = (enum vg_state)why;
		snprintf(r->reason, sizeof(r->reason), "%s",
		    why == VG_ST_TIMEOUT ? "timed out" : "cancelled");
	}
	local_cleanup(a);
	if (a->pidfd >= 0) {
		close(a->pidfd);
		a->pidfd = -1;
	}
	return rc;
}

static int
local_prepare(const struct vg_manifest *m, const char *run_dir,
    struct vg_err *e)
{
	const struct vg_sandbox *sb;

	return sandbox_for(m, &sb, e);
}

static void
local_probe(struct vg_buf *out)
{
	static const enum vg_isolation_level levels[] = {
		VG_ISO_NONE, VG_ISO_STANDARD, VG_ISO_STRICT,
	};
	struct vg_isolation_conf iso;
	struct vg_sandbox *sb;
	struct vg_err e;
	size_t i;

	vg_buf_printf(out, "local: tree kill: %s\n", vg_host_caps()->pidns &&
	    (vg_host_caps()->root || vg_host_caps()->userns) ?
	    "ok (PID namespace per task)" : "degraded (subreaper walk; "
	    "enable user namespaces for a PID namespace per task)");
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		memset(&iso, 0, sizeof(iso));
		iso.level = levels[i];
		vg_err_init(&e);
		if (vg_sandbox_new(&iso, &sb, &e) != 0) {
			vg_buf_printf(out, "local: isolation %s: unavailable: "
			    "%s\n", vg_isolation_name(levels[i]), e.msg);
			continue;
		}
		if (*vg_sandbox_downgrades(sb) == '\0')
			vg_buf_printf(out, "local: isolation %s: ok\n",
			    vg_isolation_name(levels[i]));
		else
			vg_buf_printf(out, "local: isolation %s: degraded: "
			    "%s\n", vg_isolation_name(levels[i]),
			    vg_sandbox_downgrades(sb));
		vg_sandbox_free(sb);
	}
}

const struct vg_backend_ops vg_backend_local = {
	.name = "local",
	.caps = VG_BCAP_ISOLATION,
	.probe = local_probe,
	.prepare = local_prepare,
	.start = local_start,
	.finish = local_finish,
	.cancel = local_cancel,
	.cleanup = local_cleanup,
	.run = local_run,
};

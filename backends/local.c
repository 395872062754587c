/*
 * local.c - the local backend: runs each attempt as a process tree on
 * this host, confined by the kernel (sandbox.c), with its output streamed
 * straight into files in the task directory.
 *
 * Process layout of one attempt:
 *
 *   vigil ── vigil-shim ── task (sh -c ..., or the argv) ── its children
 *
 * vigil never forks a copy of itself per task.  The shim's process is
 * created with clone(2) sharing vigil's memory (CLONE_VM | CLONE_VFORK,
 * as posix_spawn does; vigil's thread waits until the exec) plus the
 * namespace flags: a PID namespace whose init it is, with a mount
 * namespace for a /proc of its own (plus a network namespace and a
 * private /tmp for `strict`, a user namespace when not root).  That
 * child only makes system calls: it joins the task's cgroup when there
 * is one, enters the namespaces (sandbox.c: the user ns maps, loopback,
 * mounts, which need the capabilities execve drops), moves its fds into
 * place and execs vigil-shim (shim-main.c, a small static program) with
 * the task's argv and environment.  The shim reads the launch
 * description (shim.h: limits, Landlock rules, the seccomp program, ...)
 * from the control socket, applies no_new_privs, Landlock and seccomp,
 * starts the task with vfork(2)+execve(2) in a session of its own,
 * forwards the signals vigil sends it to every process of the namespace,
 * reaps orphans, and when the task ends kills whatever is left (daemons
 * that called setsid or double-forked cannot escape a PID namespace) and
 * exits, reporting the task's exact wait status on the control socket.
 * SIGKILL to the shim is enough to end the whole tree: the kernel kills
 * every process of a namespace whose init dies.  Where no PID namespace
 * can be made (no root, user namespaces off), the shim is a child
 * subreaper instead and walks /proc/PID/task/TID/children to signal the
 * tree.  docs/isolation.md has the measurements behind this.
 *
 * The scheduler watches the shim (a->pid, a->pidfd) and reaps it; finish()
 * reads the shim's report.  Output never passes through vigil: the task's
 * stdout and stderr are the files themselves.
 *
 * State: what lives from one attempt to the next is the drive's (struct
 * local_drive, the handle prepare returns: backend.h); an attempt outside
 * a drive gets one of its own, freed with it.  What stays file-level is
 * the process's by nature or a cache of what cannot change under it:
 * where vigil-shim is and its descriptor, /dev/null's descriptor, vigil's
 * working directory, the clone stack (one per process: each clone waits
 * for its child's exec), the session flag (a process that runs a
 * session's commands), and the sandbox the drive-less ops (downgrades,
 * confinement, host notes: launch, status, doctor) compiled last, which
 * backs the strings they lend.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/dirpool.h"
#include "common/log.h"
#include "common/path.h"
#include "common/proc.h"
#include "backends/egress-run.h"
#include "backends/backend.h"
#include "backends/cgroup.h"
#include "backends/local.h"
#include "backends/gpu.h"
#include "backends/sandbox.h"
#include "backends/shim.h"
#include "runner/policy/host-access.h"

#ifndef VG_LIBEXECDIR
#define VG_LIBEXECDIR	"/usr/local/libexec/vigil"
#endif

/* The child of clone runs on this stack until it execs (CLONE_VM). */
#define PREEXEC_STACK	(256 * 1024)

/* Resolved command names kept per run (vg_local_reset drops them). */
#define NRESOLVED	32

/* Backend state of one attempt (a->priv for the local backend; held by
 * the caller for vg_local_proc_start). */
struct local_drive;
struct vg_local_proc {
	struct local_drive	*ld;		/* its drive (a reference) */
	int			 ctl_fd;	/* control socket, or -1 */
	int			 pidns;
	int			 killall_sig;
	char			*argv0;
	char			*tmp_dir;	/* private TMPDIR, or NULL */
	int			 tmp_gone;	/* the shim removed it */
	int			 tmp_slot;	/* its slot in ld's tmp_pool, or
						   -1 */
	int			 tmp_kept;	/* a->tmp_dir: its owner's */
	char			*out_dir;	/* where stdout and stderr are */
	struct vg_cgroup	*cg;		/* limits; NULL when none asked */
	uint64_t		 cg_memory;	/* the memory limit in it */
	int			 outputs_stay;	/* a->outputs_stay */
	int			 exec_slot;	/* in ld's xpool, or -1 */
	int			 exec_dead;	/* it ended unasked */
};

/*
 * What the child of clone needs until it execs the shim.  Lives on
 * vigil's stack: the child shares vigil's memory and vigil's thread waits
 * (CLONE_VFORK), so the child reads it in place and writes err and stage
 * back.
 */
struct preexec {
	const char		*shim;		/* path of vigil-shim */
	int			 shim_fd;	/* open on it, for fexecve */
	char			**argv;
	char			**envp;
	const struct vg_sandbox	*sb;		/* NULL: no sandbox */
	struct vg_sandbox_paths	 paths;
	int			 own_proc;	/* no sandbox, own /proc */
	int			 fds[4];	/* become the shim's 0..3 */
	const struct vg_shim_rule *rules;	/* fds kept across exec */
	int			 nrules;
	/*
	 * cgroup.procs files (open O_WRONLY) the child joins by writing
	 * "0\n" before it execs, so that the task is accounted from its
	 * first instruction (vg_cgroup_procs_fds).
	 */
	const int		*join;
	int			 njoin;
	/* No sandbox (VG_LOCAL_TREE_ONLY): the network namespace to join
	 * (-1: none), or up_lo to bring loopback up in a new one. */
	int			 net_nsfd;
	int			 up_lo;
	volatile int		 err;		/* errno of the failed step */
	const char *volatile	 stage;
};

/* A compiled sandbox, rebuilt when the isolation section differs
 * (compared by content, not by pointer). */
struct sb_cache {
	struct vg_sandbox	*sb;
	uint64_t		 key;
	int			 valid;
	unsigned		 gen;		/* counts the compilations */
	struct vg_buf		 downgrades;	/* vg_local_downgrades */
	struct vg_buf		 confinement;	/* local_confinement */
};

/* A command name resolved in a PATH, so that the task's exec does not
 * search (each miss is a failed execve). */
struct resolved {
	uint64_t		 key;
	char			*path_env;
	char			*name;
	char			*file;
};

/* A temporary directory slot (tmp_pool_get). */
struct tmp_slot {
	char	*dir;
	int	 busy;
};

/* A slot's executor (xpool_spawn). */
struct executor {
	pid_t			 pid;		/* 0: free entry */
	int			 ctl;		/* its fd 3's peer */
	int			 busy;		/* its tasks: 0, 1, or 2 with
						   one held */
	unsigned		 gen;		/* sbc.gen it was made for */
	unsigned long long	 start;		/* /proc starttime */
};
#define MAX_EXECUTORS	256

/*
 * The local backend's handle (backend.h, struct vg_backend_drive): what
 * lives from one attempt to the next, from prepare to unprepare; or, for
 * an attempt outside a drive, from its start to its cleanup.  Each
 * attempt started holds a reference (la->ld), so what it uses outlives
 * an early unprepare.
 */
struct local_drive {
	struct vg_backend_drive	 base;		/* first: the downcast */
	int			 refs;		/* the drive's own (until
						   unprepare) + attempts' */
	struct sb_cache		 sbc;		/* the tasks' sandbox */
	/* The egress proxy (isolation.network allow-list, as root) that
	 * prepare started; tasks join its network namespace. */
	struct vg_egress_run	 egress;
	/* The proxy its tasks join: egress, or outside a drive the
	 * session's (vg_local_egress). */
	struct vg_egress_run	*eg;
	struct resolved		 resolved[NRESOLVED];
	unsigned		 resolved_next;
	/* Reused for every launch description. */
	struct vg_buf		 blob;
	/* Temporary directories by slot (tmp_pool_get). */
	struct {
		struct tmp_slot	*v;
		size_t		 n, cap;
	} tmp_pool;
	/* Empty output files kept for the next tasks (out_pool_put). */
	struct {
		char	*run;		/* RUN of the pooled files, or NULL */
		int	 fd;		/* RUN/tmp */
		int	*v;		/* numbers N of the pooled PID.oN */
		size_t	 n, cap;
		int	 next;		/* the number of the next file put */
		int	 running, peak;	/* attempts with output files */
		int	 off;		/* renames into place fail: no pool */
	} out_pool;
	/* The slots' executors (exec_in_slot). */
	struct {
		struct executor	 v[MAX_EXECUTORS];
		int		 n;		/* entries in use at most */
	} xpool;
};

/* The sandbox the drive-less ops (vg_local_downgrades, confinement,
 * host notes) compiled last: a cache, which also backs the strings they
 * lend until their next call. */
static struct sb_cache loose;

/* Where vigil-shim is (found once), or why not: a cache, the same for
 * every drive of the process. */
static struct {
	char			 path[PATH_MAX];
	int			 found;
	int			 fd;		/* open on path when fd_open */
	int			 fd_open;
} shim;

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

/* FNV-1a over every string of l, then a separator: lists next to each
 * other hash apart however their items split. */
static uint64_t
fnv_list(uint64_t h, const struct vg_strv *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		h = fnv(h, l->v[i]);
	return fnv(h, "\001");
}

/* Hash of everything in iso that changes the compiled sandbox. */
static uint64_t
iso_key(const struct vg_isolation_conf *iso, const char *workdir)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char num[32];

	snprintf(num, sizeof(num), "%d/%d/%d", (int)iso->level, iso->required,
	    (int)iso->network.mode);
	h = fnv(h, num);
	h = fnv_list(h, &iso->network.allow);
	h = fnv_list(h, &iso->network.deny);
	h = fnv(h, iso->ptrace);
	h = fnv(h, iso->workdir);
	h = fnv(h, workdir);
	h = fnv_list(h, &iso->writable);
	h = fnv_list(h, &iso->readable);
	h = fnv_list(h, &iso->devices);
	h = fnv_list(h, &iso->capabilities);
	return fnv_list(h, &iso->sockets);
}

/*
 * isolation.capabilities is host access: root's powers kept by the task.
 * Judged as a container's host access is (vg_policy_host_access): refused
 * unless the policy's mode or a host-access allow rule lets it through.
 */
static int
caps_allowed(const struct vg_manifest *m, struct vg_err *e)
{
	const struct vg_isolation_conf *iso = &m->isolation;
	struct vg_buf why = VG_BUF_INIT;
	struct vg_host_verdict hv;
	size_t i;

	if (iso->capabilities.n == 0 || iso->level == VG_ISO_NONE)
		return 0;
	for (i = 0; i < iso->capabilities.n; i++)
		vg_buf_printf(&why, "isolation.capabilities '%s' keeps a "
		    "capability of root's\n", iso->capabilities.v[i]);
	vg_policy_host_access(&m->policy, vg_buf_str(&why), NULL, &hv);
	vg_buf_release(&why);
	if (hv.allowed)
		return 0;
	return vg_err_set(e, VG_EDENIED, "host access refused: %s",
	    hv.reason);
}

/* The cgroup limits m asks of every task (memory: the attempt's, which
 * retries scale).  The shim joins the cgroup with the task and counts
 * as one process. */
static void
cgroup_limits(const struct vg_manifest *m, uint64_t memory,
    struct vg_cgroup_limits *cl)
{
	memset(cl, 0, sizeof(*cl));
	cl->memory = memory;
	cl->pids = m->limits.pids > 0 ? m->limits.pids + 1 : 0;
	cl->required = m->isolation.required;
}

/*
 * Judges the host sockets m's isolation.sockets leaves reachable: each is
 * host access (a root task reaching a container engine's socket is root
 * on the host), let through only by a policy allow rule of category
 * host-access matching its path.  Returns 0, or VG_EDENIED naming the
 * first socket refused and the rule that would allow it.
 */
static int
sockets_judged(const struct vg_manifest *m, struct vg_err *e)
{
	struct vg_host_verdict hv;
	char finding[VG_ERR_MSG_MAX];
	size_t i;

	for (i = 0; i < m->isolation.sockets.n; i++) {
		/* A relative path is refused by vg_sandbox_new. */
		if (m->isolation.sockets.v[i][0] != '/')
			continue;
		snprintf(finding, sizeof(finding), "isolation.sockets '%s' "
		    "reaches a host socket", m->isolation.sockets.v[i]);
		vg_policy_host_access(&m->policy, finding,
		    m->isolation.sockets.v[i], &hv);
		if (!hv.allowed)
			return vg_err_set(e, VG_EDENIED, "host access "
			    "refused: %s", hv.reason);
		vg_info("isolation.sockets '%s': %s",
		    m->isolation.sockets.v[i], hv.reason);
	}
	return 0;
}

/* Set in a process that runs a session's commands: they start in the
 * manifest's workdir (session start --workdir) or the session's own
 * directory, never in vigil's.  The process's by nature. */
static int session_mode;

void
vg_local_for_session(void)
{
	session_mode = 1;
}

/* The directory tasks run in and (standard) may write: the manifest's
 * workdir, else for a run vigil's own (NULL: none). */
static const char *
task_workdir(const struct vg_manifest *m)
{
	static char cwd[PATH_MAX];

	if (m->workdir != NULL || session_mode)
		return m->workdir;
	if (cwd[0] == '\0' && getcwd(cwd, sizeof(cwd)) == NULL)
		cwd[0] = '\0';
	return cwd[0] != '\0' ? cwd : NULL;
}

/* A session command's egress proxy (isolation.network allow-list, as
 * root), attached by local-session.c around the one command this
 * process runs, which is outside any drive (vg_local_egress). */
static struct vg_egress_run session_egress = VG_EGRESS_RUN_INIT;

struct vg_egress_run *
vg_local_egress(void)
{
	return &session_egress;
}

/* Returns the sandbox for m in cache, compiling it when needed (its
 * tasks joining egress's namespace, when egress is not NULL); borrowed. */
static int
sandbox_for(struct sb_cache *cache, const struct vg_egress_run *egress,
    const struct vg_manifest *m, const struct vg_sandbox **out,
    struct vg_err *e)
{
	struct vg_sandbox *sb;
	const char *wd = task_workdir(m);
	uint64_t key = iso_key(&m->isolation, wd);
	int rc;

	if (cache->valid && cache->key == key) {
		*out = cache->sb;
		return 0;
	}
	if ((rc = caps_allowed(m, e)) != 0 ||
	    (rc = sockets_judged(m, e)) != 0 ||
	    (rc = vg_sandbox_new(&m->isolation, wd, &sb, e)) != 0)
		return rc;
	if (vg_sandbox_egress(sb) && egress != NULL)
		vg_sandbox_set_egress(sb, egress->nsfd);
	vg_sandbox_free(cache->sb);
	cache->sb = sb;
	cache->key = key;
	cache->valid = 1;
	cache->gen++;
	*out = sb;
	return 0;
}

/* Frees what cache holds. */
static void
sb_cache_release(struct sb_cache *cache)
{
	vg_sandbox_free(cache->sb);
	cache->sb = NULL;
	cache->valid = 0;
	vg_buf_release(&cache->downgrades);
	vg_buf_release(&cache->confinement);
}

const char *
vg_local_downgrades(const struct vg_manifest *m, struct vg_err *e)
{
	const struct vg_sandbox *sb;
	struct vg_cgroup_limits cl;
	struct vg_resources peak;

	if (sandbox_for(&loose, NULL, m, &sb, e) != 0)
		return NULL;
	vg_buf_reset(&loose.downgrades);
	vg_buf_adds(&loose.downgrades, vg_sandbox_downgrades(sb));
	vg_expand_peak(m, &peak);
	cgroup_limits(m, peak.memory, &cl);
	vg_cgroup_plan_downgrades(&cl, &loose.downgrades);
	return vg_buf_str(&loose.downgrades);
}

/* backend op: confinement */
static const char *
local_confinement(const struct vg_manifest *m)
{
	const struct vg_sandbox *sb;
	struct vg_err e;

	vg_err_init(&e);
	if (sandbox_for(&loose, NULL, m, &sb, &e) != 0)
		return NULL;
	vg_buf_reset(&loose.confinement);
	vg_sandbox_describe(sb, &loose.confinement);
	return vg_buf_str(&loose.confinement);
}

void
vg_local_reset(void)
{
	sb_cache_release(&loose);
	shim.found = 0;
	if (shim.fd_open)
		close(shim.fd);
	shim.fd_open = 0;
}

/*
 * Temp directories by slot: a task of a run (task_dir RUN/tasks/I) gets
 * RUN/tmp/PID.K, K the lowest slot no running attempt of this process
 * holds.  The shim makes it at first use and leaves it; cleanup empties
 * it when the task left something there, and the drive's end removes
 * them all.  So a run of many tasks makes one directory per --jobs slot,
 * not a mkdir and rmdir per task (on a busy ext4 the inode churn costs
 * more than the rest of a task start).  The names are the process's
 * (PID), the pools the drive's: a process drives one run at a time, and
 * its attempts outside a drive (vigil exec, task-exec: one each) pool
 * the same way.
 */

/* Removes the slots' directories (and their RUN/tmp when empty). */
static void
tmp_pool_drop(struct local_drive *ld)
{
	char *up;
	size_t i;

	for (i = 0; i < ld->tmp_pool.n; i++) {
		if (rmdir(ld->tmp_pool.v[i].dir) != 0 && errno != ENOENT)
			vg_rm_rf(ld->tmp_pool.v[i].dir, NULL);
		if ((up = strrchr(ld->tmp_pool.v[i].dir, '/')) != NULL) {
			*up = '\0';
			(void)rmdir(ld->tmp_pool.v[i].dir);
		}
		free(ld->tmp_pool.v[i].dir);
	}
	free(ld->tmp_pool.v);
	ld->tmp_pool.v = NULL;
	ld->tmp_pool.n = ld->tmp_pool.cap = 0;
}

/* The RUN part of task_dir RUN/tasks/I (its length), or -1. */
static int
run_of(const char *task_dir)
{
	const char *slash = strrchr(task_dir, '/');

	if (slash == NULL || slash - task_dir < 6 ||
	    strncmp(slash - 6, "/tasks", 6) != 0)
		return -1;
	return (int)(slash - 6 - task_dir);
}

/* Takes a free slot's directory for task_dir's run, or returns -1 when
 * task_dir is not RUN/tasks/I (the attempt then has its own tmp). */
static int
tmp_pool_get(struct local_drive *ld, const char *task_dir, const char **dir)
{
	int r = run_of(task_dir);
	size_t i, rl;
	char *path;

	if (r < 0)
		return -1;
	rl = (size_t)r;
	for (i = 0; i < ld->tmp_pool.n; i++)
		if (!ld->tmp_pool.v[i].busy &&
		    strncmp(ld->tmp_pool.v[i].dir, task_dir, rl) == 0 &&
		    strncmp(ld->tmp_pool.v[i].dir + rl, "/tmp/", 5) == 0)
			break;
	if (i == ld->tmp_pool.n) {
		path = vg_xasprintf("%.*s/tmp", (int)rl, task_dir);
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			free(path);
			return -1;
		}
		free(path);
		ld->tmp_pool.v = vg_xgrow(ld->tmp_pool.v, &ld->tmp_pool.cap,
		    ld->tmp_pool.n + 1, sizeof(*ld->tmp_pool.v));
		ld->tmp_pool.v[i].dir = vg_xasprintf("%.*s/tmp/%ld.%zu",
		    (int)rl, task_dir, (long)vg_self_pid(), i);
		ld->tmp_pool.v[i].busy = 0;
		ld->tmp_pool.n++;
	}
	ld->tmp_pool.v[i].busy = 1;
	*dir = ld->tmp_pool.v[i].dir;
	return (int)i;
}

/*
 * Empty output files kept for the next tasks: an ended task's empty
 * stdout or stderr is renamed to RUN/tmp/PID.oN instead of unlinked, and
 * open_output renames one into the next task's directory instead of
 * creating a file (a rename costs less than a new inode, on ext4 without
 * a journal much less).  At most OUT_POOL_PER_SLOT per task running at
 * once; the files go when the drive ends, and a dead process's are
 * removed by the next one to pool files in the run.
 */
#define OUT_POOL_PER_SLOT	4

/* The name in RUN/tmp of this process's pooled file n. */
static const char *
pooled_name(int n, char *buf, size_t len)
{
	snprintf(buf, len, "%ld.o%d", (long)vg_self_pid(), n);
	return buf;
}

/* Removes the pooled files (and RUN/tmp when that leaves it empty). */
static void
out_pool_drop(struct local_drive *ld)
{
	char name[64];
	size_t i;

	if (ld->out_pool.fd >= 0) {
		for (i = 0; i < ld->out_pool.n; i++) {
			(void)unlinkat(ld->out_pool.fd, pooled_name(
			    ld->out_pool.v[i], name, sizeof(name)), 0);
		}
		close(ld->out_pool.fd);
		if (ld->out_pool.run != NULL) {
			char *tmp = vg_path_join(ld->out_pool.run, "tmp");

			(void)rmdir(tmp);
			free(tmp);
		}
	}
	free(ld->out_pool.run);
	free(ld->out_pool.v);
	ld->out_pool.run = NULL;
	ld->out_pool.v = NULL;
	ld->out_pool.n = ld->out_pool.cap = 0;
	ld->out_pool.fd = -1;
	ld->out_pool.off = 0;
}


/* Makes the pool the one of task_dir's run; false when it has none. */
static int
out_pool_for(struct local_drive *ld, const char *task_dir, int create)
{
	int rl = run_of(task_dir), fd;
	char *tmp;

	if (rl < 0)
		return 0;
	if (ld->out_pool.run != NULL &&
	    strlen(ld->out_pool.run) == (size_t)rl &&
	    strncmp(ld->out_pool.run, task_dir, (size_t)rl) == 0)
		return 1;
	if (!create)
		return 0;
	out_pool_drop(ld);
	tmp = vg_xasprintf("%.*s/tmp", rl, task_dir);
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
		free(tmp);
		return 0;
	}
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(tmp);
	if (fd < 0)
		return 0;
	/* Pooled files a dead process left there. */
	vg_pool_sweep(fd, "", 'o', 0);
	ld->out_pool.fd = fd;
	ld->out_pool.run = vg_xstrndup(task_dir, (size_t)rl);
	return 1;
}

/* Keeps the empty regular file dir/name in the pool; false when it was
 * not taken (not empty, pool full, no pool for dir). */
static int
out_pool_put(struct local_drive *ld, const char *dir, const char *name)
{
	char path[PATH_MAX], pooled[64];
	struct stat st;

	if (ld->out_pool.off || ld->out_pool.n >= (size_t)OUT_POOL_PER_SLOT *
	    (size_t)(ld->out_pool.peak > 0 ? ld->out_pool.peak : 1) ||
	    !out_pool_for(ld, dir, 1) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return 0;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != 0 || st.st_nlink != 1 ||
	    renameat(AT_FDCWD, path, ld->out_pool.fd,
	    pooled_name(ld->out_pool.next, pooled, sizeof(pooled))) != 0)
		return 0;
	ld->out_pool.v = vg_xgrow(ld->out_pool.v, &ld->out_pool.cap,
	    ld->out_pool.n + 1, sizeof(*ld->out_pool.v));
	ld->out_pool.v[ld->out_pool.n++] = ld->out_pool.next++;
	return 1;
}

/*
 * Moves a pooled file to name in the task directory dir, open as dfd
 * (name must not exist there), and returns it open for appending, or -1
 * when there is none to take.  A pooled file that is
 * not an empty regular file of ours, mode 0600, with no other name, is
 * removed instead of used.
 */
static int
out_pool_take(struct local_drive *ld, const char *dir, int dfd,
    const char *name)
{
	char pooled[64];
	struct stat st;
	int fd;

	while (ld->out_pool.n > 0 && out_pool_for(ld, dir, 0)) {
		pooled_name(ld->out_pool.v[ld->out_pool.n - 1], pooled,
		    sizeof(pooled));
		fd = openat(ld->out_pool.fd, pooled, O_WRONLY | O_APPEND |
		    O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size == 0 && st.st_nlink == 1 &&
		    st.st_uid == geteuid() && (st.st_mode & 07777) == 0600) {
			/* Never over an earlier attempt's output. */
			if (renameat2(ld->out_pool.fd, pooled, dfd, name,
			    RENAME_NOREPLACE) == 0) {
				ld->out_pool.n--;
				return fd;
			}
			/* EEXIST: kept for the next task; else (no
			 * RENAME_NOREPLACE here) no pooling in this run. */
			if (errno != EEXIST)
				ld->out_pool.off = 1;
			close(fd);
			return -1;
		}
		if (fd >= 0)
			close(fd);
		(void)unlinkat(ld->out_pool.fd, pooled, 0);
		ld->out_pool.n--;
	}
	return -1;
}

/* Gives slot k back, emptied. */
static void
tmp_pool_put(struct local_drive *ld, int k)
{
	struct tmp_slot *t;
	int empty = 1, fd;

	if (k < 0 || (size_t)k >= ld->tmp_pool.n)
		return;
	t = &ld->tmp_pool.v[k];
	if ((fd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		empty = vg_dir_empty(fd) != 0;
		close(fd);
	}
	/* The shim makes it again at the next task's start. */
	if (!empty)
		vg_rm_rf(t->dir, NULL);
	t->busy = 0;
}

/* True when path is an executable regular file. */
static int
executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/* Finds vigil-shim: next to this executable (build/<variant>/ while
 * developing), in ../libexec/vigil beside it (an install under any
 * PREFIX or DESTDIR, wherever it was moved to), then in the LIBEXECDIR
 * compiled in.  tried (may be NULL) gets the places looked at. */
const char *
vg_local_shim(char *tried, size_t size)
{
	char self[PATH_MAX], cand[3][PATH_MAX], *slash;
	size_t i, k = 0;
	ssize_t n;

	if (shim.found)
		return shim.path;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL)
			*slash = '\0';
		if ((size_t)snprintf(cand[k], sizeof(cand[k]), "%s/%s", self,
		    VG_SHIM_NAME) < sizeof(cand[k]))
			k++;
		if ((slash = strrchr(self, '/')) != NULL &&
		    (size_t)snprintf(cand[k], sizeof(cand[k]),
		    "%.*s/libexec/vigil/%s", (int)(slash - self), self,
		    VG_SHIM_NAME) < sizeof(cand[k]) &&
		    strcmp(cand[k], VG_LIBEXECDIR "/" VG_SHIM_NAME) != 0)
			k++;
	}
	snprintf(cand[k++], sizeof(cand[0]), "%s/%s", VG_LIBEXECDIR,
	    VG_SHIM_NAME);
	for (i = 0; i < k; i++)
		if (executable(cand[i])) {
			memcpy(shim.path, cand[i], sizeof(shim.path));
			shim.found = 1;
			return shim.path;
		}
	if (tried != NULL && k == 1)
		snprintf(tried, size, "(no /proc/self/exe) and '%s'", cand[0]);
	else if (tried != NULL && k == 2)
		snprintf(tried, size, "'%.1000s' and '%.1000s'", cand[0],
		    cand[1]);
	else if (tried != NULL)
		snprintf(tried, size, "'%.1000s', '%.1000s' and '%.1000s'",
		    cand[0], cand[1], cand[2]);
	return NULL;
}

/* Moves fd above the shim's fixed fds (0..3) so that placing those never
 * overwrites it: only when vigil itself runs with stdio closed. */
static int
fd_above(int fd)
{
	int hi;

	if (fd < 0 || fd >= VG_SHIM_FD_FIRST_RULE)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, VG_SHIM_FD_FIRST_RULE);
	close(fd);
	return hi;
}

/*
 * Finds vigil-shim or fails naming where it looked.  It is also kept
 * open (*fd), and started from that descriptor: the child of clone may
 * have mounted a private /tmp over the directory it lies in (strict)
 * before it execs.
 */
static int
shim_path(const char **out, int *fd, struct vg_err *e)
{
	char tried[2 * PATH_MAX + 16];
	int f;

	if ((*out = vg_local_shim(tried, sizeof(tried))) == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "cannot find the task "
		    "launcher '%s': tried %s (build it with 'make', or install "
		    "it with 'make install')", VG_SHIM_NAME, tried);
	if (!shim.fd_open) {
		/* Above the fds the child puts at 0..3 and the rules. */
		if ((f = open(*out, O_RDONLY | O_CLOEXEC)) < 0 ||
		    (f = fd_above(f)) < 0)
			return vg_err_errno(e, "cannot open the task launcher "
			    "'%s'", *out);
		shim.fd = f;
		shim.fd_open = 1;
	}
	if (fd != NULL)
		*fd = shim.fd;
	return 0;
}

/*
 * Returns the file name resolves to in the search path (as execvp(3)
 * would pick it), or NULL when it is not found or the path has a
 * relative entry (which only the task's own directory can resolve); the
 * shim then searches itself.  Cached per drive and PATH; borrowed.
 */
static const char *
resolve(struct local_drive *ld, const char *name, const char *path)
{
	uint64_t key = fnv(fnv(0xcbf29ce484222325ULL, path), name);
	const char *p, *end;
	char buf[PATH_MAX];
	size_t i, dlen, nlen = strlen(name);

	for (i = 0; i < NRESOLVED; i++)
		if (ld->resolved[i].key == key &&
		    ld->resolved[i].name != NULL &&
		    strcmp(ld->resolved[i].name, name) == 0 &&
		    strcmp(ld->resolved[i].path_env, path) == 0)
			return ld->resolved[i].file;
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		dlen = (size_t)(end - p);
		if (dlen == 0 || *p != '/')
			return NULL;
		if (dlen + 1 + nlen + 1 <= sizeof(buf)) {
			memcpy(buf, p, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, name, nlen + 1);
			if (executable(buf))
				break;
		}
		if (*end == '\0')
			return NULL;
	}
	i = ld->resolved_next++ % NRESOLVED;
	free(ld->resolved[i].path_env);
	free(ld->resolved[i].name);
	free(ld->resolved[i].file);
	ld->resolved[i].key = key;
	ld->resolved[i].path_env = vg_xstrdup(path);
	ld->resolved[i].name = vg_xstrdup(name);
	ld->resolved[i].file = vg_xstrdup(buf);
	return ld->resolved[i].file;
}

/* Reports a failure of the child of clone on the control socket, the
 * way the shim reports its own.  Async-signal-safe. */
static void
preexec_report(struct preexec *P, int err, const char *stage)
{
	struct vg_shim_msg msg;
	size_t i;

	memset(&msg, 0, sizeof(msg));
	msg.kind = VG_SHIM_SETUP_FAILED;
	msg.err = err;
	for (i = 0; stage[i] != '\0' && i + 1 < sizeof(msg.stage); i++)
		msg.stage[i] = stage[i];
	(void)send(P->fds[3], &msg, sizeof(msg), MSG_NOSIGNAL);
}

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/*
 * Execs the shim from its descriptor.  Under valgrind, whose execveat(2)
 * turns the descriptor back into the path it was opened by (a path the
 * task's private /tmp may hide), through /proc/self/fd/N instead, which
 * the kernel resolves to the open file.  Only async-signal-safe calls.
 */
static void
exec_shim(const struct preexec *P)
{
	char path[32] = "/proc/self/fd/", digits[12];
	int fd = P->shim_fd, n = 0, i = 14;

	if (!RUNNING_ON_VALGRIND) {
		fexecve(P->shim_fd, P->argv, P->envp);
		return;
	}
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0 && n < (int)sizeof(digits));
	while (n > 0)
		path[i++] = digits[--n];
	path[i] = '\0';
	execve(path, P->argv, P->envp);
}

/*
 * The child of clone: joins the cgroup, enters the namespaces, puts the
 * shim's fds in place and execs it.  Shares vigil's memory, so it only
 * makes system calls and only writes P->err and P->stage.
 */
static int
preexec_main(void *arg)
{
	struct preexec *P = arg;
	const char *stage = "join cgroup";
	int i, rc = 0;

	for (i = 0; i < P->njoin; i++)
		if (write(P->join[i], "0\n", 2) != 2) {
			rc = -errno;
			goto fail;
		}
	if (P->sb != NULL)
		rc = vg_sandbox_enter(P->sb, &P->paths, &stage);
	else if (P->own_proc)
		rc = vg_sandbox_own_proc(&stage);
	if (rc != 0)
		goto fail;
	if (P->sb == NULL && P->net_nsfd >= 0) {
		stage = "join the egress network namespace";
		if (setns(P->net_nsfd, CLONE_NEWNET) != 0) {
			rc = -errno;
			goto fail;
		}
	}
	if (P->sb == NULL && P->up_lo) {
		stage = "loopback";
		if ((rc = vg_loopback_up()) != 0)
			goto fail;
	}
	/* dup2 clears FD_CLOEXEC on the copies; the sources (all above
	 * 3, see fd_above) close at exec. */
	stage = "shim fds";
	for (i = 0; i < 4; i++)
		if (dup2(P->fds[i], i) < 0) {
			rc = -errno;
			goto fail;
		}
	for (i = 0; i < P->nrules; i++)
		if (fcntl(P->rules[i].fd, F_SETFD, 0) != 0) {
			rc = -errno;
			goto fail;
		}
	stage = "exec " VG_SHIM_NAME;
	exec_shim(P);
	rc = -errno;
fail:
	P->err = -rc;
	P->stage = stage;
	preexec_report(P, -rc, stage);
	_exit(127);
}

#if defined(__SANITIZE_ADDRESS__)
#define VG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VG_ASAN 1
#endif
#endif

/*
 * Creates the shim's process with the namespace flags and runs
 * preexec_main(P) in it; returns its pid (with *pidfd, or -1 without
 * pidfds) or -1 with errno set.  Blocks until the child has exec'd or
 * exited.  Signals must be blocked.
 */
static pid_t
clone_preexec(struct preexec *P, unsigned long long flags, int *pidfd)
{
	pid_t pid;

	/* AddressSanitizer and valgrind cannot follow a child running on
	 * another stack in the same memory: copy the memory instead
	 * (fork). */
#ifndef VG_ASAN
	if (RUNNING_ON_VALGRIND)
#endif
	{
		pid = vg_clone_pidfd(flags, pidfd);
		if (pid == 0)
			preexec_main(P);
		return pid;
	}
#ifndef VG_ASAN
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char *stack;
	int cflags = (int)flags | CLONE_VM | CLONE_VFORK | SIGCHLD, fd = -1;

	/* One stack is enough: each caller waits until its child execs,
	 * and the lock keeps threads apart. */
	pthread_mutex_lock(&lock);
	if (stack == NULL) {
		stack = mmap(NULL, PREEXEC_STACK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (stack == MAP_FAILED) {
			stack = NULL;
			pthread_mutex_unlock(&lock);
			return -1;
		}
	}
	pid = clone(preexec_main, stack + PREEXEC_STACK, cflags | CLONE_PIDFD,
	    P, &fd);
	if (pid < 0 && errno == EINVAL) {
		/* Before Linux 5.2: no CLONE_PIDFD. */
		pid = clone(preexec_main, stack + PREEXEC_STACK, cflags, P);
		if (pid > 0)
			fd = vg_pidfd_open(pid);
	}
	pthread_mutex_unlock(&lock);
	if (pid > 0)
		*pidfd = fd;
	return pid;
#endif
}

/* clone_preexec with every signal blocked across it, so that none
 * reaches a vigil handler in the child (the shim takes them with
 * sigwaitinfo); errno is clone's. */
static pid_t
clone_blocked(struct preexec *P, unsigned long long flags, int *pidfd)
{
	sigset_t all, old;
	int saved;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone_preexec(P, flags, pidfd);
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}

/*
 * Slot executors (shim.h, "A slot's executor"): where the caller watches
 * only for readiness (a->reuse_ok, the direct scheduler), a task whose
 * sandbox needs nothing of the task's own at namespace set-up (no cgroup
 * to join, no GPUs, no private /tmp) runs in an executor kept from one
 * task to the next instead of a new shim in new namespaces: the clone
 * with CLONE_NEWPID | CLONE_NEWNS, the mount of /proc, the shim's exec and
 * the namespace's teardown are paid once per slot, not per task.  An
 * executor runs one task at a time; it is idle when none of it runs.  It
 * may hold one more, handed over while its task runs (a->ahead_of), to
 * start as soon as that one ends.  Executors are the drive's: an attempt
 * outside a drive never runs in one.
 * VIGIL_NO_EXECUTOR=1 turns them off (for bench/local-overhead.sh's
 * comparison).
 */

/* Stops executor k: end of file on its fd 3 ends it and its task. */
static void
xpool_stop(struct local_drive *ld, int k)
{
	struct executor *x = &ld->xpool.v[k];

	if (x->pid <= 0)
		return;
	if (x->busy)		/* not waited for: it goes with its task */
		(void)kill(x->pid, SIGKILL);
	close(x->ctl);
	while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
		;
	memset(x, 0, sizeof(*x));
	x->ctl = -1;
}

/* Stops every executor of ld. */
static void
xpool_drop(struct local_drive *ld)
{
	int k;

	for (k = 0; k < ld->xpool.n; k++)
		xpool_stop(ld, k);
	ld->xpool.n = 0;
}

/* A new handle, held once (by the drive, or by the one attempt outside
 * a drive it is made for). */
static struct local_drive *
local_drive_new(void)
{
	struct local_drive *ld = vg_xcalloc(1, sizeof(*ld));
	static const struct vg_egress_run none = VG_EGRESS_RUN_INIT;

	ld->base.ops = &vg_backend_local;
	ld->refs = 1;
	ld->egress = none;
	ld->eg = &ld->egress;
	ld->out_pool.fd = -1;
	return ld;
}

/* Drops a reference to ld; the last one frees it and everything it
 * keeps (executors, the egress proxy, pooled directories and files). */
static void
local_drive_put(struct local_drive *ld)
{
	size_t i;

	if (ld == NULL || --ld->refs > 0)
		return;
	xpool_drop(ld);
	vg_egress_run_stop(&ld->egress);
	sb_cache_release(&ld->sbc);
	for (i = 0; i < NRESOLVED; i++) {
		free(ld->resolved[i].path_env);
		free(ld->resolved[i].name);
		free(ld->resolved[i].file);
	}
	vg_buf_release(&ld->blob);
	out_pool_drop(ld);
	tmp_pool_drop(ld);
	free(ld);
}

/* The local handle d, checked: NULL when d is none or another
 * backend's. */
static struct local_drive *
local_drive_of(struct vg_backend_drive *d)
{
	return d != NULL && d->ops == &vg_backend_local ?
	    (struct local_drive *)d : NULL;
}

/* backend op: unprepare; the executors stop now, whatever an attempt
 * still holds goes with its last reference. */
static void
local_unprepare(struct vg_backend_drive *d)
{
	struct local_drive *ld = local_drive_of(d);

	if (ld == NULL)
		return;
	xpool_drop(ld);
	local_drive_put(ld);
}

/*
 * Starts an executor for the sandbox P describes and returns its entry,
 * or -1 with errno.  launch is the first task's launch description,
 * which the executor reads as its own (its argv left out).
 */
static int
xpool_spawn(struct local_drive *ld, struct preexec *P,
    unsigned long long flags, const struct vg_buf *launch, int nullfd)
{
	struct vg_shim_launch *l;
	struct executor *x;
	static char name[] = VG_SHIM_NAME;
	char *argv[] = { name, NULL }, *envp[] = { NULL };
	struct preexec X = *P;
	int sv[2], k, pidfd = -1, saved, sent;
	pid_t pid;
	void *copy;

	for (k = 0; k < MAX_EXECUTORS && ld->xpool.v[k].pid > 0; k++)
		;
	if (k == MAX_EXECUTORS) {
		errno = EAGAIN;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	if ((sv[0] = fd_above(sv[0])) < 0 || (sv[1] = fd_above(sv[1])) < 0)
		goto fail;
	copy = vg_xmalloc(launch->len);
	memcpy(copy, launch->data, launch->len);
	l = copy;
	l->argc = l->envc = l->argv_off = l->env_off = 0;
	l->flags &= ~(uint32_t)(VG_SHIM_MKTMP | VG_SHIM_KEEPTMP);
	sent = send(sv[0], copy, launch->len, MSG_NOSIGNAL) ==
	    (ssize_t)launch->len;
	free(copy);
	if (!sent)
		goto fail;
	X.argv = argv;
	X.envp = envp;
	X.fds[0] = X.fds[1] = X.fds[2] = nullfd;
	X.fds[3] = sv[1];
	X.err = 0;
	pid = clone_blocked(&X, flags, &pidfd);
	saved = errno;
	if (pidfd >= 0)
		close(pidfd);
	close(sv[1]);
	sv[1] = -1;
	if (pid < 0 || X.err != 0) {
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		errno = pid < 0 ? saved : X.err;
		goto fail;
	}
	x = &ld->xpool.v[k];
	x->pid = pid;
	x->ctl = sv[0];
	x->busy = 0;
	x->gen = ld->sbc.gen;
	if (vg_proc_starttime(pid, &x->start) != 0)
		x->start = 0;
	if (k >= ld->xpool.n)
		ld->xpool.n = k + 1;
	return k;
fail:
	saved = errno;
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	errno = saved;
	return -1;
}

/* Sends the launch in blob with the four descriptors fds to executor
 * k; 0, or -1 with errno. */
static int
xpool_send(struct local_drive *ld, int k, const int fds[4])
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct msghdr mh;
	struct iovec iov;

	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = ld->blob.data;
	iov.iov_len = ld->blob.len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = sizeof(cm.b);
	CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(4 * sizeof(int));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, 4 * sizeof(int));
	if (sendmsg(ld->xpool.v[k].ctl, &mh, MSG_NOSIGNAL) ==
	    (ssize_t)ld->blob.len)
		return 0;
	return -1;
}

/*
 * Hands the task in the launch buffer to an idle executor of the current
 * sandbox (started when there is none), or, with behind >= 0, to
 * executor behind to hold after its running task; with its stdio and the
 * executor's end of its report socket.  Returns the executor's entry, or
 * -1 with errno (EAGAIN: behind cannot hold it).  An idle executor found
 * dead is replaced once.
 */
static int
xpool_run(struct local_drive *ld, struct preexec *P, unsigned long long flags,
    int report, int behind)
{
	int fds[4] = { P->fds[0], P->fds[1], P->fds[2], report };
	int k, tries;

	if (behind >= 0) {
		if (behind >= ld->xpool.n || ld->xpool.v[behind].pid <= 0 ||
		    ld->xpool.v[behind].busy != 1 ||
		    ld->xpool.v[behind].gen != ld->sbc.gen ||
		    xpool_send(ld, behind, fds) != 0) {
			errno = EAGAIN;
			return -1;
		}
		ld->xpool.v[behind].busy = 2;
		return behind;
	}
	for (tries = 0; tries < 2; tries++) {
		for (k = 0; k < ld->xpool.n; k++) {
			if (ld->xpool.v[k].pid <= 0 || ld->xpool.v[k].busy)
				continue;
			if (ld->xpool.v[k].gen == ld->sbc.gen)
				break;
			xpool_stop(ld, k);	/* of an earlier sandbox */
		}
		if (k == ld->xpool.n && (k = xpool_spawn(ld, P, flags,
		    &ld->blob, P->fds[0])) < 0)
			return -1;
		if (xpool_send(ld, k, fds) == 0) {
			ld->xpool.v[k].busy = 1;
			return k;
		}
		if (errno != EPIPE && errno != ECONNRESET &&
		    errno != ECONNREFUSED)
			return -1;
		xpool_stop(ld, k);	/* it died while idle */
	}
	errno = EPIPE;
	return -1;
}

/* Gives executor k back after its task's end; a dead one is stopped. */
static void
xpool_put(struct local_drive *ld, int k, int dead)
{
	if (k < 0 || k >= ld->xpool.n || ld->xpool.v[k].pid <= 0)
		return;
	if (ld->xpool.v[k].busy > 0)
		ld->xpool.v[k].busy--;
	/* One of an earlier sandbox goes once it holds no task. */
	if (dead || (ld->xpool.v[k].gen != ld->sbc.gen &&
	    ld->xpool.v[k].busy == 0))
		xpool_stop(ld, k);
}

/* Appends the task's argv and environment to the launch in ld's blob, for an
 * executor.  Fails when that makes it larger than the shim accepts. */
static int
blob_add_argv(struct local_drive *ld, char *const *argv, size_t argc,
    char *const *envp, struct vg_err *e)
{
	struct vg_shim_launch l;
	size_t i, envc = 0;

	memcpy(&l, ld->blob.data, sizeof(l));
	if (argc > VG_SHIM_MAX_ARGV)
		return vg_err_set(e, VG_ELIMIT, "%zu arguments", argc);
	l.argc = (uint32_t)argc;
	l.argv_off = (uint32_t)ld->blob.len;
	for (i = 0; i < argc; i++)
		vg_buf_add(&ld->blob, argv[i], strlen(argv[i]) + 1);
	for (; envp[envc] != NULL; envc++)
		;
	if (envc > VG_SHIM_MAX_ARGV)
		return vg_err_set(e, VG_ELIMIT, "%zu variables", envc);
	l.envc = (uint32_t)envc;
	l.env_off = envc > 0 ? (uint32_t)ld->blob.len : 0;
	for (i = 0; i < envc; i++)
		vg_buf_add(&ld->blob, envp[i], strlen(envp[i]) + 1);
	if (ld->blob.len > VG_SHIM_MAX_SIZE)
		return vg_err_set(e, VG_ELIMIT, "launch description of %zu "
		    "bytes", ld->blob.len);
	l.flags |= VG_SHIM_SERVE;
	l.size = (uint32_t)ld->blob.len;
	memcpy(ld->blob.data, &l, sizeof(l));
	return 0;
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

/* env_set for vg_egress_run_env. */
static void
egress_env_set(void *arg, const char *name, const char *value)
{
	env_set(arg, name, value);
}

/* Adds one rlimit to the launch (soft = hard = v). */
static void
add_limit(struct vg_shim_launch *l, int res, uint64_t v)
{
	l->limits[l->nlimits].resource = res;
	l->limits[l->nlimits].cur = v;
	l->limits[l->nlimits].max = v;
	l->nlimits++;
}


/* Opens (once) /dev/null for the tasks' stdin. */
static int
null_fd(struct vg_err *e)
{
	static int fd = -1;

	if (fd < 0 && (fd = fd_above(open("/dev/null", O_RDWR |
	    O_CLOEXEC))) < 0)
		return vg_err_errno(e, "cannot open '/dev/null'");
	return fd;
}

/* Opens a task output file for appending; one that stays there when
 * empty (a->outputs_stay) is most often there already.  The task can
 * write its directory: what stands at the name on a retry may be a
 * link, a FIFO or another file's hard link it planted, so the file is
 * opened beneath the directory's descriptor and refused unless it is a
 * regular file of vigil's own (common/beneath.h). */
static int
open_output(struct local_drive *ld, const char *dir, const char *name,
    int stay, struct vg_err *e)
{
	char path[PATH_MAX], what[PATH_MAX + 32];
	int fd, dfd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return vg_err_set(e, VG_EINVAL, "task directory '%s' is too "
		    "long", dir);
	if ((dfd = vg_beneath_anchor(dir, e)) < 0)
		return dfd;
	snprintf(what, sizeof(what), "task directory '%s'", dir);
	/* Most often there already when it stays; else from the pool
	 * (renamed in only where nothing stands), else made. */
	fd = stay ? vg_beneath_file(dfd, name, O_WRONLY | O_APPEND, 0, what,
	    e) : VG_ENOENT;
	if (fd == VG_ENOENT && (fd = out_pool_take(ld, dir, dfd, name)) < 0)
		fd = vg_beneath_file(dfd, name, O_WRONLY | O_APPEND | O_CREAT,
		    0600, what, e);
	close(dfd);
	return fd < 0 ? fd : fd_above(fd);
}

/* Frees the backend state of a. */
static void
local_free(struct vg_local_proc *la)
{
	if (la == NULL)
		return;
	if (la->ctl_fd >= 0)
		close(la->ctl_fd);
	vg_cgroup_free(la->cg);
	local_drive_put(la->ld);
	free(la->argv0);
	free(la->tmp_dir);
	free(la->out_dir);
	free(la);
}

/*
 * Makes the cgroup of attempt a when its manifest asks for limits (and
 * limits says to apply them), or when it joins the namespace of egress
 * proxy eg (NULL: none): the cgroup of each connection's socket names
 * its task to the proxy.  Points the child's joins at it.
 */
static int
cgroup_for(struct vg_attempt *a, struct vg_egress_run *eg,
    struct vg_local_proc *la, struct preexec *P, int limits, struct vg_err *e)
{
	struct vg_cgroup_limits cl;
	struct stat st;
	char name[64];
	int rc, own = eg != NULL && eg->pid > 0;

	memset(&cl, 0, sizeof(cl));
	if (limits)
		cgroup_limits(a->m, a->res.memory, &cl);
	if (cl.memory == 0 && cl.pids == 0 && !own)
		return 0;
	snprintf(name, sizeof(name), "%.40s-%d-%d", a->run_id != NULL ?
	    a->run_id : "run", a->task != NULL ? a->task->index : 0,
	    a->attempt);
	if ((rc = vg_cgroup_new(NULL, &cl, name, &la->cg, e)) != 0)
		return rc;
	la->cg_memory = cl.memory;
	P->njoin = vg_cgroup_procs_fds(la->cg, &P->join);
	/* A cgroup v2 id is the inode number of its directory. */
	if (own && vg_cgroup_dirfd_v2(la->cg) >= 0 &&
	    fstat(vg_cgroup_dirfd_v2(la->cg), &st) == 0)
		vg_egress_run_task(eg, (uint64_t)st.st_ino,
		    a->task != NULL ? a->task->index : -1, a->attempt);
	return 0;
}

/* True when a PID namespace (with a mount namespace for its /proc) can be
 * made without a user namespace. */
static int
tree_only_pidns(void)
{
	const struct vg_host_caps *c = vg_host_caps();

	return c->pidns && c->root;
}

/* Appends s (with its NUL) to the launch; returns its offset, 0 for
 * NULL. */
static uint32_t
blob_str(struct vg_buf *b, const char *s)
{
	size_t off = b->len;

	if (s == NULL)
		return 0;
	vg_buf_add(b, s, strlen(s) + 1);
	return (uint32_t)off;
}

/*
 * An attempt with gpus and no assignment (vigil exec, task-exec in a
 * Slurm job or step, whose CUDA_VISIBLE_DEVICES Slurm set) gets the
 * first GPUs of this host's pool; too few is an error.
 */
static int
gpus_unassigned(struct vg_attempt *a, struct vg_err *e)
{
	struct vg_pool pool;
	size_t i;
	int rc;

	if (a->gpu_set || a->res.gpus <= 0)
		return 0;
	if ((rc = vg_pool_host(vg_pool_conf_of(a->m), 1, &pool, e)) != 0)
		return rc;
	if (pool.ngpus < (size_t)a->res.gpus) {
		rc = vg_err_set(e, VG_EUNSUPPORTED, "task %d asks gpus: %d, "
		    "this host has %zu (from %s)", a->task != NULL ?
		    a->task->index : 0, a->res.gpus, pool.ngpus,
		    pool.gpu_from);
		vg_pool_release(&pool);
		return rc;
	}
	a->gpu_set = 1;
	a->gpu_vendor = (int)pool.vendor;
	a->gpu_ids[0] = a->gpu_devs[0] = '\0';
	for (i = 0; i < (size_t)a->res.gpus; i++)
		vg_gpu_give(a->gpu_ids, sizeof(a->gpu_ids), a->gpu_devs,
		    sizeof(a->gpu_devs), &pool.gpus[i]);
	vg_pool_release(&pool);
	return 0;
}

/*
 * Builds the launch description for one attempt in ld's reused buffer
 * blob; the header's fixed fields come from l.  Fails when the strings
 * make it larger than the shim accepts.
 */
static int
blob_build(struct local_drive *ld, struct vg_shim_launch *l,
    const struct vg_sandbox *sb,
    const struct vg_sandbox_paths *paths, const char *exec_path,
    const char *cwd, struct vg_err *e)
{
	static const char zero[8];
	const void *bpf = NULL;
	unsigned nbpf = 0;

	if (sb != NULL)
		vg_sandbox_launch(sb, paths, l, &bpf, &nbpf);
	vg_buf_reset(&ld->blob);
	vg_buf_add(&ld->blob, l, sizeof(*l));
	l->exec_path = blob_str(&ld->blob, exec_path);
	l->cwd = blob_str(&ld->blob, cwd);
	l->task_dir = blob_str(&ld->blob, paths->task_dir);
	l->scratch_dir = blob_str(&ld->blob, paths->scratch_dir);
	l->tmp_dir = blob_str(&ld->blob, paths->tmp_dir);
	if (nbpf > 0) {
		if (ld->blob.len % 8 != 0)
			vg_buf_add(&ld->blob, zero, 8 - ld->blob.len % 8);
		l->bpf_off = (uint32_t)ld->blob.len;
		l->nbpf = nbpf;
		vg_buf_add(&ld->blob, bpf, (size_t)nbpf * 8);
	}
	if (ld->blob.len > VG_SHIM_MAX_SIZE)
		return vg_err_set(e, VG_ELIMIT, "launch description of %zu "
		    "bytes is over the %d the shim accepts (paths too long)",
		    ld->blob.len, VG_SHIM_MAX_SIZE);
	l->magic = VG_SHIM_MAGIC;
	l->version = VG_SHIM_VERSION;
	l->header_size = sizeof(*l);
	l->size = (uint32_t)ld->blob.len;
	memcpy(ld->blob.data, l, sizeof(*l));
	return 0;
}

/* False when VIGIL_NO_EXECUTOR is set (to something other than 0). */
static int
executors_on(void)
{
	const char *v = getenv("VIGIL_NO_EXECUTOR");

	return v == NULL || *v == '\0' || strcmp(v, "0") == 0;
}

/*
 * Runs the attempt whose launch is in ld's blob in a slot's executor (with
 * a->ahead_of, held by the executor running that attempt), with sv as
 * its report socket; returns 1 when it runs or is held (sv[0] is then
 * la->ctl_fd and a->pidfd, sv[1] closed), 0 when it cannot, blob and
 * sv as they were, for a shim of its own.
 */
static int
exec_in_slot(struct vg_attempt *a, struct vg_local_proc *la,
    struct preexec *P, unsigned long long flags, char *const *argv,
    size_t argc, int sv[2])
{
	struct local_drive *ld = la->ld;
	const struct vg_local_proc *first = a->ahead_of != NULL ?
	    a->ahead_of->priv : NULL;
	struct vg_shim_launch head;
	size_t len = ld->blob.len;
	int k;

	memcpy(&head, ld->blob.data, sizeof(head));
	if ((a->ahead_of != NULL && (first == NULL || first->ld != ld ||
	    first->exec_slot < 0)) ||
	    blob_add_argv(ld, argv, argc, P->envp, NULL) != 0 ||
	    (k = xpool_run(ld, P, flags, sv[1], first != NULL ?
	    first->exec_slot : -1)) < 0) {
		ld->blob.len = len;
		memcpy(ld->blob.data, &head, sizeof(head));
		return 0;
	}
	close(sv[1]);
	sv[1] = -1;
	la->exec_slot = k;
	la->ctl_fd = sv[0];
	sv[0] = -1;
	a->pid = ld->xpool.v[k].pid;
	a->pid_start = ld->xpool.v[k].start;
	a->pidfd = la->ctl_fd;
	a->watch_only = 1;
	a->started = vg_now();
	return 1;
}

/*
 * Starts argv (envp: NULL = the attempt's clean environment) for a under
 * the shim, confined as how says; see vg_local_proc_start.
 */
static int
proc_start(struct vg_attempt *a, char *const *argvp, char *const *envp,
    enum vg_local_confine how, const struct vg_local_net *net,
    struct vg_local_proc **out, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	const struct vg_limits *lim = &a->m->limits;
	const struct vg_sandbox *sb = NULL;
	const char *path, *exec_path = NULL;
	struct local_drive *ld;
	struct vg_local_proc *la;
	struct vg_shim_launch l;
	struct preexec P;
	unsigned long long flags;
	int sv[2] = { -1, -1 }, rc, pidfd = -1, i;
	size_t k;
	pid_t pid;

	*out = NULL;
	if (a->task_dir == NULL)
		return vg_err_set(e, VG_EINVAL, "attempt has no task "
		    "directory");
	memset(&P, 0, sizeof(P));
	memset(&l, 0, sizeof(l));
	for (i = 0; i < 4; i++)
		P.fds[i] = -1;
	P.net_nsfd = -1;
	la = vg_xcalloc(1, sizeof(*la));
	la->ctl_fd = -1;
	la->tmp_slot = -1;
	la->exec_slot = -1;
	/* The drive's state, or, outside a drive, the attempt's own (whose
	 * tasks join a session's proxy, when one is attached). */
	if ((ld = local_drive_of(a->drive)) != NULL)
		ld->refs++;
	else {
		ld = local_drive_new();
		ld->eg = &session_egress;
	}
	la->ld = ld;
	if (how == VG_LOCAL_ISOLATION && (rc = sandbox_for(&ld->sbc,
	    ld->eg, a->m, &sb, e)) != 0)
		goto out;
	if (how == VG_LOCAL_ISOLATION && (rc = gpus_unassigned(a, e)) != 0)
		goto out;
	if ((rc = shim_path(&P.shim, &P.shim_fd, e)) != 0)
		goto out;
	if (how == VG_LOCAL_ISOLATION && (rc = cgroup_for(a, sb != NULL &&
	    vg_sandbox_egress(sb) ? ld->eg : NULL, la, &P, 1, e)) != 0)
		goto out;
	if (how != VG_LOCAL_ISOLATION && net != NULL &&
	    (net->none || net->egress != NULL)) {
		/* A namespace of vigil's to join, or a new one: root's. */
		if (!vg_host_caps()->root) {
			rc = vg_err_set(e, VG_EUNSUPPORTED, "isolation.network "
			    "'%s' for this backend needs vigil to run as root "
			    "(it makes the network namespace the program "
			    "starts in)", net->none ? "none" : "allow-list");
			goto out;
		}
		if (net->egress != NULL && net->egress->pid > 0) {
			P.net_nsfd = net->egress->nsfd;
			if ((rc = cgroup_for(a, net->egress, la, &P, 0,
			    e)) != 0)
				goto out;
		} else if (net->egress != NULL) {
			rc = vg_err_set(e, VG_EINVAL, "the run's egress "
			    "proxy is not running");
			goto out;
		} else
			P.up_lo = 1;
	}

	if (argvp != NULL)
		for (k = 0; argvp[k] != NULL; k++)
			vg_strv_push(&argv, argvp[k]);
	else
		vg_attempt_argv(a, &argv);
	if (argv.n == 0) {
		rc = vg_err_set(e, VG_EINVAL, "task %d has an empty command",
		    a->task != NULL ? a->task->index : 0);
		goto out;
	}
	if (envp != NULL)
		for (k = 0; envp[k] != NULL; k++)
			vg_strv_push(&env, envp[k]);
	else
		vg_attempt_env(a, &env);
	if (sb != NULL && (vg_sandbox_level(sb) != VG_ISO_NONE ||
	    a->m->isolation.level != VG_ISO_NONE)) {
		/* Created by the shim (or, for a private /tmp, by the
		 * child of clone), in parallel with vigil. */
		const char *slot;

		/* A private /tmp is bound from beneath the task directory,
		 * which stays visible under the new /tmp; a slot's might
		 * not. */
		if (!vg_sandbox_private_tmp(sb) && a->tmp_dir != NULL) {
			la->tmp_dir = vg_xstrdup(a->tmp_dir);
			la->tmp_kept = 1;
			l.flags |= VG_SHIM_KEEPTMP;
		} else if (!vg_sandbox_private_tmp(sb) &&
		    (la->tmp_slot = tmp_pool_get(ld, a->task_dir,
		    &slot)) >= 0) {
			la->tmp_dir = vg_xstrdup(slot);
			l.flags |= VG_SHIM_KEEPTMP;
		} else
			la->tmp_dir = vg_path_join(a->task_dir, "tmp");
		l.flags |= VG_SHIM_MKTMP;
		env_set(&env, "TMPDIR", la->tmp_dir);
	}
	if (sb != NULL && vg_sandbox_egress(sb) && ld->eg->pid > 0)
		vg_egress_run_env(ld->eg, egress_env_set, &env);
	la->argv0 = vg_xstrdup(argv.v[0]);
	la->outputs_stay = a->outputs_stay;
	/* Streamed output has no files to tidy. */
	la->out_dir = a->out_set ? NULL : vg_xstrdup(a->task_dir);

	P.argv = argv.v;
	/* A strv is NULL-terminated; an empty one has no array at all. */
	P.envp = env.v != NULL ? env.v : (char *[]){ NULL };
	if (strchr(argv.v[0], '/') == NULL) {
		if ((path = env_get(env.v, "PATH")) == NULL)
			path = "/usr/local/bin:/usr/bin:/bin";
		exec_path = resolve(ld, argv.v[0], path);
	}
	P.sb = sb;
	P.paths.task_dir = a->task_dir;
	P.paths.scratch_dir = a->scratch_dir;
	P.paths.tmp_dir = la->tmp_dir;
	P.paths.ngpus = a->gpu_set ? a->res.gpus : 0;
	P.paths.gpu_devs = a->gpu_devs;
	if (sb != NULL) {
		la->pidns = vg_sandbox_pidns(sb);
		flags = vg_sandbox_clone_flags(sb);
	} else {
		la->pidns = tree_only_pidns();
		P.own_proc = la->pidns;
		flags = la->pidns ? CLONE_NEWPID | CLONE_NEWNS : 0;
		if (P.up_lo)
			flags |= CLONE_NEWNET;
	}
	la->killall_sig = la->pidns ? 0 : SIGRTMIN + 2;
	l.flags |= la->pidns ? VG_SHIM_PIDNS : 0;
	l.killall_sig = la->killall_sig;
	if (lim->cpu_time)
		add_limit(&l, RLIMIT_CPU, lim->cpu_time);
	if (lim->address_space)
		add_limit(&l, RLIMIT_AS, lim->address_space);
	if (lim->nofile)
		add_limit(&l, RLIMIT_NOFILE, lim->nofile);
	if (lim->nproc)
		add_limit(&l, RLIMIT_NPROC, lim->nproc);
	if (lim->fsize)
		add_limit(&l, RLIMIT_FSIZE, lim->fsize);
	add_limit(&l, RLIMIT_CORE, lim->core_set ? lim->core : 0);
	if ((rc = blob_build(ld, &l, sb, &P.paths, exec_path,
	    how == VG_LOCAL_ISOLATION ? a->m->workdir : NULL, e)) != 0)
		goto out;
	P.rules = l.rules;
	P.nrules = (int)l.nrules;

	if ((rc = null_fd(e)) < 0)
		goto out;
	P.fds[0] = rc;
	if (a->out_set) {
		/* output: stream: the driver's pipes (copies, closed below). */
		if ((P.fds[1] = fcntl(a->out_fd[0], F_DUPFD_CLOEXEC,
		    VG_SHIM_FD_FIRST_RULE)) < 0 ||
		    (P.fds[2] = fcntl(a->out_fd[1], F_DUPFD_CLOEXEC,
		    VG_SHIM_FD_FIRST_RULE)) < 0) {
			rc = vg_err_errno(e, "cannot pass the output pipes");
			goto out;
		}
	} else if ((P.fds[1] = open_output(ld, a->task_dir, "stdout",
	    a->outputs_stay, e)) < 0 || (P.fds[2] = open_output(ld,
	    a->task_dir, "stderr", a->outputs_stay, e)) < 0) {
		rc = e != NULL ? e->rc : VG_EIO;
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
	    (sv[0] = fd_above(sv[0])) < 0 || (sv[1] = fd_above(sv[1])) < 0) {
		rc = vg_err_errno(e, "cannot create a socket pair");
		goto out;
	}
	if (a->reuse_ok && ld == local_drive_of(a->drive) && sb != NULL &&
	    la->pidns && P.njoin == 0 &&
	    P.paths.ngpus == 0 && !vg_sandbox_private_tmp(sb) &&
	    vg_sandbox_outside_shielded(sb) && executors_on() &&
	    exec_in_slot(a, la, &P, flags, argv.v, argv.n, sv))
		goto started;
	if (a->ahead_of != NULL) {
		/* Only an executor holds a task for later. */
		if (la->tmp_slot >= 0) {
			ld->tmp_pool.v[la->tmp_slot].busy = 0;
			la->tmp_slot = -1;
		}
		rc = VG_EAGAIN;
		goto out;
	}
	P.fds[3] = sv[1];
	/* Queued before the shim exists: it never waits for it. */
	if (send(sv[0], ld->blob.data, ld->blob.len, MSG_NOSIGNAL) !=
	    (ssize_t)ld->blob.len) {
		rc = vg_err_errno(e, "cannot send the launch description");
		goto out;
	}

	if ((pid = clone_blocked(&P, flags, &pidfd)) < 0) {
		rc = vg_err_errno(e, "cannot start task %d",
		    a->task != NULL ? a->task->index : 0);
		goto out;
	}

	/* A failed step of the child (P.err) is on the control socket
	 * for finish(), like the shim's own reports. */
	a->pid = pid;
	a->pidfd = pidfd;
	a->started = vg_now();
	if (vg_proc_starttime(pid, &a->pid_start) != 0)
		a->pid_start = 0;
	la->ctl_fd = sv[0];
	sv[0] = -1;
started:
	if (la->out_dir != NULL && ++ld->out_pool.running > ld->out_pool.peak)
		ld->out_pool.peak = ld->out_pool.running;
	*out = la;
	la = NULL;
	rc = 0;
out:
	for (i = 1; i < 3; i++)
		if (P.fds[i] >= 0)
			close(P.fds[i]);
	for (i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	vg_strv_release(&argv);
	vg_strv_release(&env);
	local_free(la);
	return rc;
}

/* Makes r OOM when the kernel killed a process of the task's cgroup at
 * its memory limit (the task may report that as a signal or as the exit
 * status of a shell that lost a child). */
static void
oom_check(const struct vg_local_proc *la, struct vg_result *r)
{
	struct vg_err e;
	uint64_t n = 0;

	vg_err_init(&e);
	if (la == NULL || la->cg == NULL || la->cg_memory == 0 ||
	    vg_cgroup_oom_kills(la->cg, &n, &e) != 0 || n == 0)
		return;
	r->state = VG_ST_OOM;
	snprintf(r->reason, sizeof(r->reason), "out of memory: %llu "
	    "process%s killed at the cgroup memory limit of %llu MiB "
	    "(resources.memory)", (unsigned long long)n, n == 1 ? "" : "es",
	    (unsigned long long)(la->cg_memory >> 20));
}

/* Fills r's usage: what the shim reaped (msg, may be NULL), the task
 * cgroup's peak (the whole tree at once: more than the largest single
 * process when several ran together) and what the attempt was given. */
static void
usage_fill(const struct vg_attempt *a, const struct vg_local_proc *la,
    const struct vg_shim_msg *msg, struct vg_result *r)
{
	struct vg_usage *u = &r->usage;
	struct vg_err e;
	uint64_t peak = 0;

	vg_usage_given(u, &a->res);
	if (msg != NULL && msg->kind == VG_SHIM_DONE) {
		u->cpu_user = (double)msg->utime_us / 1e6;
		u->cpu_sys = (double)msg->stime_us / 1e6;
		u->max_rss = (long long)msg->maxrss_kb * 1024;
		u->known |= VG_USAGE_CPU | VG_USAGE_RSS;
	}
	vg_err_init(&e);
	if (la == NULL || la->cg == NULL ||
	    vg_cgroup_memory_peak(la->cg, &peak, &e) != 0 || peak == 0)
		return;
	if (!(u->known & VG_USAGE_RSS) || (long long)peak > u->max_rss)
		u->max_rss = (long long)peak;
	u->known |= VG_USAGE_RSS;
	if (la->cg_memory > 0) {
		u->mem_limit = (long long)la->cg_memory;
		u->known |= VG_USAGE_MEM;
	}
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

/* The exit status vigil-shim ends with for its task's wait status ws
 * (shim-main.c, shim_exit). */
static int
shim_code(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return (128 + WTERMSIG(ws)) & 0xff;
	return -1;
}

int
vg_local_proc_finish(struct vg_attempt *a, struct vg_local_proc *la,
    int wstatus, struct vg_result *r, int *task_ws)
{
	struct vg_shim_msg msg;
	ssize_t n = -1;

	if (task_ws != NULL)
		*task_ws = -1;

	memset(r, 0, sizeof(r[0]));
	r->started = a->started;
	r->ended = vg_now();
	if (la != NULL && la->ctl_fd >= 0) {
		do
			n = recv(la->ctl_fd, &msg, sizeof(msg), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		close(la->ctl_fd);
		la->ctl_fd = -1;
	}
	if (la != NULL && la->exec_slot >= 0) {
		a->pidfd = -1;		/* that was ctl_fd */
		la->exec_dead = n != (ssize_t)sizeof(msg);
	}
	if (n != (ssize_t)sizeof(msg)) {
		/* No report: the shim itself was killed (SIGKILL from
		 * cancel), which took the whole tree with it; or the slot's
		 * executor was, by someone else. */
		if (la != NULL && la->exec_slot >= 0)
			wstatus = SIGKILL;
		set_from_wstatus(r, wstatus);
		usage_fill(a, la, NULL, r);
		if (task_ws != NULL)
			*task_ws = wstatus;
		return 0;
	}
	msg.stage[sizeof(msg.stage) - 1] = '\0';
	msg.detail[sizeof(msg.detail) - 1] = '\0';
	if (la != NULL)
		la->tmp_gone = msg.tmp_gone != 0;
	/* The shim of a task of its own exits with its task's status: the
	 * kernel's word (wstatus) must agree with the report.  A report the
	 * shim did not write (nothing of its is within the task's reach,
	 * but should that fail) is not believed. */
	if (msg.kind == VG_SHIM_DONE && la != NULL && la->exec_slot < 0 &&
	    WIFEXITED(wstatus) && WEXITSTATUS(wstatus) !=
	    shim_code(msg.wstatus)) {
		set_from_wstatus(r, wstatus);
		if (r->state == VG_ST_SUCCEEDED)
			r->state = VG_ST_FAILED;
		snprintf(r->reason, sizeof(r->reason), "the task launcher's "
		    "report (wait status 0x%x) disagrees with its exit "
		    "status %d", (unsigned)msg.wstatus, WEXITSTATUS(wstatus));
		usage_fill(a, la, NULL, r);
		if (task_ws != NULL)
			*task_ws = wstatus;
		return 0;
	}
	switch (msg.kind) {
	case VG_SHIM_DONE:
		set_from_wstatus(r, msg.wstatus);
		usage_fill(a, la, &msg, r);
		if (task_ws != NULL)
			*task_ws = msg.wstatus;
		if (r->state != VG_ST_SUCCEEDED)
			oom_check(la, r);
		break;
	case VG_SHIM_EXEC_FAILED:
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
			    "'%s': %s: %s", la != NULL ? la->argv0 : "?",
			    msg.stage, strerror(msg.err));
		break;
	case VG_SHIM_DROPPED:
		r->started = r->ended;	/* it never ran */
		r->state = VG_ST_CANCELLED;
		r->exit_code = -1;
		snprintf(r->reason, sizeof(r->reason), "cancelled before it "
		    "started");
		break;
	case VG_SHIM_SETUP_FAILED:
	default:
		r->state = VG_ST_BACKEND_ERROR;
		r->exit_code = -1;
		if (strcmp(msg.stage, "exec " VG_SHIM_NAME) == 0)
			snprintf(r->reason, sizeof(r->reason), "cannot execute "
			    "the task launcher '%.160s': %s", shim.path,
			    strerror(msg.err));
		else if (strcmp(msg.stage, "launch") == 0)
			snprintf(r->reason, sizeof(r->reason), "the task "
			    "launcher refused its launch description: %s",
			    msg.detail);
		else
			snprintf(r->reason, sizeof(r->reason), "sandbox setup "
			    "failed (%s): %s", msg.stage, strerror(msg.err));
		break;
	}
	return 0;
}

/*
 * A failed task whose stderr names a path the sandbox refused it: the
 * reason says which, at which level, and what in the manifest would
 * allow it (backends/sandbox-explain.c).  The file is read as a task
 * may have left it: beneath its directory, no link followed.
 */
static void
refusal_explain(const struct vg_attempt *a, const struct vg_local_proc *la,
    struct vg_result *r)
{
	struct vg_sandbox_paths p;
	struct vg_buf why = VG_BUF_INIT;
	struct vg_loc loc;
	struct vg_err e;
	char tail[8192], where[PATH_MAX + 32], *at = NULL;
	struct stat st;
	ssize_t got;
	size_t n;
	int fd;

	vg_err_init(&e);
	if (a->task_dir == NULL || (fd = vg_beneath_file_in(a->task_dir, 0,
	    "stderr", O_RDONLY, 0, &e)) < 0)
		return;
	got = fstat(fd, &st) == 0 ? pread(fd, tail, sizeof(tail),
	    st.st_size > (off_t)sizeof(tail) ? st.st_size -
	    (off_t)sizeof(tail) : 0) : -1;
	(void)close(fd);
	if (got <= 0)
		return;
	memset(&p, 0, sizeof(p));
	p.task_dir = a->task_dir;
	p.scratch_dir = a->scratch_dir;
	p.tmp_dir = la != NULL ? la->tmp_dir : NULL;
	if (vg_manifest_loc(a->m, "isolation", &loc) == 0 && loc.file != NULL) {
		snprintf(where, sizeof(where), "at %s:%d", loc.file, loc.line);
		at = where;
	} else if (vg_manifest_loc(a->m, "", &loc) == 0 && loc.file != NULL) {
		snprintf(where, sizeof(where), "in an isolation: section of "
		    "%s", loc.file);
		at = where;
	}
	if (vg_sandbox_why(la->ld->sbc.sb, &p, at, tail, (size_t)got,
	    &why)) {
		n = strlen(r->reason);
		snprintf(r->reason + n, sizeof(r->reason) - n, "%s%s",
		    n > 0 ? "; " : "", vg_buf_str(&why));
	}
	vg_buf_release(&why);
}

/* backend op: finish */
static int
local_finish(struct vg_attempt *a, int wstatus, struct vg_result *r,
    struct vg_err *e)
{
	struct vg_local_proc *la = a->priv;
	struct vg_buf note = VG_BUF_INIT;
	char tag[96];
	size_t n;
	int rc;

	(void)e;
	rc = vg_local_proc_finish(a, la, wstatus, r, NULL);
	if (la == NULL || !la->ld->sbc.valid)
		return rc;
	if (rc == 0 && r->state == VG_ST_FAILED)
		refusal_explain(a, la, r);
	/* What runs code outside the sandbox (a .git, a .bashrc) that
	 * the task made in the working directory is moved aside. */
	if (rc == 0 && a->m->isolation.level !=
	    VG_ISO_NONE) {
		snprintf(tag, sizeof(tag), "%s.%d.%d", a->run_id != NULL ?
		    a->run_id : "session", a->task != NULL ?
		    a->task->index : 0, a->attempt);
		if (vg_sandbox_sweep(la->ld->sbc.sb, tag, &note) > 0) {
			vg_warn("%s", vg_buf_str(&note));
			n = strlen(r->reason);
			snprintf(r->reason + n, sizeof(r->reason) - n, "%s%s",
			    n > 0 ? "; " : "", vg_buf_str(&note));
		}
	}
	vg_buf_release(&note);
	return rc;
}

int
vg_local_proc_signal(struct vg_attempt *a, struct vg_local_proc *la, int sig,
    struct vg_err *e)
{
	int rc;

	if (a->pid <= 0 || (la == NULL && a->watch_only))
		return 0;	/* (a->pid: the executor of the next tasks) */
	if (la != NULL && la->exec_slot >= 0) {
		/* To its executor, on the task's own socket: a signal that
		 * arrives after the task's end is lost with the socket,
		 * never given to the slot's next task. */
		struct vg_shim_sig sg = { .sig = sig };

		if (la->ctl_fd >= 0)
			(void)send(la->ctl_fd, &sg, sizeof(sg), MSG_DONTWAIT |
			    MSG_NOSIGNAL);
		return 0;
	}
	/* SIGKILL to a namespace init kills the namespace.  A subreaper
	 * shim is asked to kill the tree, since killing it would orphan
	 * the tree instead. */
	if (sig == SIGKILL && la != NULL && !la->pidns)
		sig = la->killall_sig;
	rc = vg_proc_signal(a->pidfd, a->pid, sig);
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

/* Removes name in dir when it is an empty regular file (keeping it in
 * the pool of output files when there is room). */
static void
unlink_empty(struct local_drive *ld, const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (out_pool_put(ld, dir, name))
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) <
	    sizeof(path) && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size == 0)
		(void)unlink(path);
}

void
vg_local_proc_free(struct vg_local_proc *la)
{
	struct local_drive *ld = la != NULL ? la->ld : NULL;

	/* Output files only where there is output: the attempt's tree is
	 * gone (the shim saw to it), nothing writes them any more. */
	if (la != NULL && la->out_dir != NULL) {
		if (!la->outputs_stay) {
			unlink_empty(ld, la->out_dir, "stdout");
			unlink_empty(ld, la->out_dir, "stderr");
		}
		ld->out_pool.running--;
	}
	if (la != NULL && la->exec_slot >= 0) {
		xpool_put(ld, la->exec_slot, la->exec_dead);
		la->exec_slot = -1;
	}
	if (la != NULL && la->tmp_slot >= 0) {
		tmp_pool_put(ld, la->tmp_slot);
		la->tmp_slot = -1;
	}
	/* Usually empty: one rmdir, the tree walk only when needed. */
	else if (la != NULL && la->tmp_dir != NULL && !la->tmp_gone &&
	    !la->tmp_kept && rmdir(la->tmp_dir) != 0 && errno != ENOENT)
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
	double grace = a->kill_grace;
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

	if ((rc = proc_start(a, NULL, NULL, VG_LOCAL_ISOLATION, NULL, &la,
	    e)) != 0)
		return rc;
	a->priv = la;
	return 0;
}

int
vg_local_proc_start(struct vg_attempt *a, char *const argv[],
    char *const envp[], enum vg_local_confine how,
    struct vg_local_proc **out, struct vg_err *e)
{
	return proc_start(a, argv, envp, how, NULL, out, e);
}

int
vg_local_proc_start_net(struct vg_attempt *a, char *const argv[],
    char *const envp[], const struct vg_local_net *net,
    struct vg_local_proc **out, struct vg_err *e)
{
	return proc_start(a, argv, envp, VG_LOCAL_TREE_ONLY, net, out, e);
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
    struct vg_backend_drive **out, struct vg_err *e)
{
	const struct vg_sandbox *sb;
	struct local_drive *ld;
	const char *path;
	int rc;

	struct vg_cgroup_limits cl;
	struct vg_resources peak;
	struct vg_buf why = VG_BUF_INIT;

	if ((rc = shim_path(&path, NULL, e)) != 0)
		return rc;
	ld = local_drive_new();
	if (m->isolation.level != VG_ISO_NONE &&
	    vg_isolation_net(&m->isolation) == VG_NET_ALLOW &&
	    vg_host_caps()->root && (rc = vg_egress_run_start(
	    &m->isolation.network, run_dir, &ld->egress, e)) != 0)
		goto out;
	/* Compiled after the proxy started: its tasks join its
	 * namespace. */
	if ((rc = sandbox_for(&ld->sbc, &ld->egress, m, &sb, e)) != 0)
		goto out;
	if (vg_sandbox_workdir_note(sb) != NULL)
		vg_warn("%s", vg_sandbox_workdir_note(sb));
	/* Refused before any task starts, like a sandbox downgrade. */
	vg_expand_peak(m, &peak);
	cgroup_limits(m, peak.memory, &cl);
	if (cl.required) {
		vg_cgroup_plan_downgrades(&cl, &why);
		if (why.len > 0)
			rc = vg_err_set(e, VG_EUNSUPPORTED, "cgroup limits "
			    "are required (isolation.required) but this host "
			    "cannot deliver them: %s", vg_buf_str(&why));
		vg_buf_release(&why);
	}
out:
	if (rc != 0) {
		local_drive_put(ld);
		return rc;
	}
	*out = &ld->base;
	return 0;
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
	char tried[2 * PATH_MAX + 16];
	const char *path;
	size_t i;

	if ((path = vg_local_shim(tried, sizeof(tried))) != NULL)
		vg_buf_printf(out, "local: task launcher: ok (%s)\n", path);
	else
		vg_buf_printf(out, "local: task launcher: missing (tried %s; "
		    "build it with 'make' or install it with 'make "
		    "install')\n", tried);
	vg_buf_printf(out, "local: tree kill: %s\n", vg_host_caps()->pidns &&
	    (vg_host_caps()->root || vg_host_caps()->userns) ?
	    "ok (PID namespace per task)" : "degraded (subreaper walk; "
	    "enable user namespaces for a PID namespace per task)");
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		memset(&iso, 0, sizeof(iso));
		iso.level = levels[i];
		vg_err_init(&e);
		if (vg_sandbox_new(&iso, NULL, &sb, &e) != 0) {
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

/* plugin op host_notes: the working directory tasks were meant to
 * write but will not (sandbox-workdir.h says why). */
static void
local_host_notes(const struct vg_manifest *m, struct vg_strv *notes)
{
	const struct vg_sandbox *sb;
	struct vg_err e;

	vg_err_init(&e);
	if (sandbox_for(&loose, NULL, m, &sb, &e) == 0 &&
	    vg_sandbox_workdir_note(sb) != NULL)
		vg_strv_push(notes, vg_sandbox_workdir_note(sb));
}

const struct vg_backend_ops vg_backend_local = {
	.caps = VG_BCAP_EXECUTORS | VG_BCAP_STDIN_STREAM,
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "local",
		.flags = VG_PLUGIN_DEFAULT | VG_PLUGIN_EGRESS |
		    VG_PLUGIN_NONET,
		.help = "a confined process on this host",
		.host_notes = local_host_notes,
	},
	.probe = local_probe,
	.prepare = local_prepare,
	.downgrades = vg_local_downgrades,
	.confinement = local_confinement,
	.start = local_start,
	.finish = local_finish,
	.cancel = local_cancel,
	.cleanup = local_cleanup,
	.unprepare = local_unprepare,
	.run = local_run,
	/* Sessions: local-session.c. */
	.session_open = vg_local_session_open,
	.session_exec = vg_local_session_exec,
	.session_close = vg_local_session_close,
	.stream_output = 1,
};

/*
 * shim.h - the contract between vigil and vigil-shim, the small static
 * program that is the first process of every local task.
 *
 * vigil starts a task with clone(2) sharing its memory (CLONE_VM |
 * CLONE_VFORK, plus the namespace flags); that child only makes system
 * calls (namespace setup, see sandbox.h), puts the shim's fds in place
 * and execs vigil-shim with the task's argv and environment.  Everything
 * else the shim needs arrives as one launch description: a versioned,
 * fixed-layout blob (struct vg_shim_launch, then the strings and the
 * seccomp program it points to) sent as a single message on the control
 * socket.  The shim answers on the same socket with one struct
 * vg_shim_msg, which carries the rusage of the whole task tree (every
 * process the shim and its descendants reaped) with VG_SHIM_DONE.
 *
 * fds of the shim at exec:
 *   0  /dev/null (the task's stdin)
 *   1  TASK_DIR/stdout
 *   2  TASK_DIR/stderr
 *   3  the control socket (AF_UNIX, SOCK_SEQPACKET): launch in, report out
 *   and the Landlock rule fds named in the launch (O_PATH, >= 4).
 *
 * The layout is the host's native one (vigil and the shim are built
 * together for one machine); magic, version and header size guard
 * against a shim from another build.  vg_shim_launch_check is the only
 * reader and never trusts a field it has not checked.
 */
#ifndef VG_SHIM_H
#define VG_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define VG_SHIM_MAGIC		0x48534756u	/* "VGSH" */
#define VG_SHIM_VERSION		5	/* 2: usage in vg_shim_msg; 3: argv,
					 * env, VG_SHIM_SERVE; 4: a launch
					 * held, VG_SHIM_DROPPED; 5: caps */
#define VG_SHIM_MAX_SIZE	(128 * 1024)
#define VG_SHIM_MAX_RULES	64
#define VG_SHIM_MAX_LIMITS	8
#define VG_SHIM_MAX_BPF		4096	/* BPF_MAXINSNS, linux/bpf_common.h */
#define VG_SHIM_MAX_STR		4096	/* PATH_MAX, with the NUL */
#define VG_SHIM_MAX_ARGV	8192	/* argv or env strings in a launch */
#define VG_SHIM_FD_CTL		3
#define VG_SHIM_FD_FIRST_RULE	4	/* lowest fd a rule may use */

/* The program's name, for the lookup next to vigil and in libexec. */
#define VG_SHIM_NAME		"vigil-shim"

/* struct vg_shim_launch.flags */
enum vg_shim_flag {
	VG_SHIM_PIDNS		= 1 << 0,	/* init of a PID namespace */
	VG_SHIM_NNP		= 1 << 1,	/* PR_SET_NO_NEW_PRIVS */
	VG_SHIM_LANDLOCK	= 1 << 2,	/* apply the ruleset */
	VG_SHIM_LL_PROC		= 1 << 3,	/* read rule on /proc (strict) */
	VG_SHIM_LL_TMP		= 1 << 4,	/* own rule for tmp_dir */
	VG_SHIM_MKTMP		= 1 << 5,	/* create tmp_dir, remove it */
	VG_SHIM_KEEPTMP		= 1 << 6,	/* ... but leave it: a slot's */
	VG_SHIM_SERVE		= 1 << 7,	/* a slot's executor (below) */
	VG_SHIM_DROPCAPS	= 1 << 8,	/* the task keeps only caps */
	VG_SHIM_NOPTRACE	= 1 << 9,	/* ... or all but SYS_PTRACE */
};
#define VG_SHIM_FLAGS_KNOWN	0x3ff

/* One Landlock path-beneath rule on an fd the shim inherits. */
struct vg_shim_rule {
	int32_t		fd;
	uint32_t	is_dir;
	uint64_t	access;
};

/* One setrlimit(2) for the task. */
struct vg_shim_limit {
	int32_t		resource;
	uint32_t	pad;
	uint64_t	cur;
	uint64_t	max;
};

/*
 * The fixed part of a launch description.  String fields are byte
 * offsets into the blob of a NUL-terminated string (0: none); the seccomp
 * program is nbpf struct sock_filter at bpf_off (8-byte aligned).
 */
struct vg_shim_launch {
	uint32_t		magic;
	uint16_t		version;
	uint16_t		header_size;	/* sizeof(struct vg_shim_launch) */
	uint32_t		size;		/* the whole blob */
	uint32_t		flags;
	int32_t			killall_sig;	/* subreaper: "kill the tree" */
	uint32_t		nlimits;
	uint32_t		nrules;
	uint32_t		nbpf;
	uint32_t		bpf_off;
	uint32_t		exec_path;	/* resolved argv[0], or 0 */
	uint32_t		cwd;		/* or 0: inherit */
	uint32_t		task_dir;
	uint32_t		scratch_dir;
	uint32_t		tmp_dir;
	uint32_t		ll_attr_size;	/* 8, 16 or 24 by Landlock ABI */
	uint32_t		pad;
	/* The task's argv and environment, argc (envc) NUL-terminated
	 * strings one after the other from argv_off (env_off); sent only
	 * to an executor (VG_SHIM_SERVE), a shim of one task takes its own
	 * argv and environment. */
	uint32_t		argc;
	uint32_t		argv_off;
	uint32_t		envc;
	uint32_t		env_off;
	uint64_t		ll_fs;		/* handled_access_fs */
	uint64_t		ll_net;		/* handled_access_net */
	uint64_t		ll_scoped;	/* scoped */
	uint64_t		ll_task_access;	/* task, scratch, tmp dirs */
	/* VG_SHIM_DROPCAPS: the capabilities (bit CAP_x) the task keeps,
	 * as ambient ones; every other is dropped from its bounding,
	 * permitted, effective and inheritable sets, and its securebits
	 * are locked so that uid 0 regains none at execve. */
	uint64_t		caps_keep;
	struct vg_shim_limit	limits[VG_SHIM_MAX_LIMITS];
	struct vg_shim_rule	rules[VG_SHIM_MAX_RULES];
};

/* What the shim (or the process that was to become it) reports. */
enum vg_shim_kind {
	VG_SHIM_DONE = 1,	/* the task ran; wstatus is its status */
	VG_SHIM_EXEC_FAILED,	/* the task could not be started */
	VG_SHIM_SETUP_FAILED,	/* the sandbox could not be set up */
	VG_SHIM_DROPPED,	/* an executor's held task never started */
};

/* One report: a single message on the control socket. */
struct vg_shim_msg {
	int32_t	kind;
	int32_t	err;		/* errno */
	int32_t	wstatus;
	int32_t	tmp_gone;	/* the shim removed tmp_dir (VG_SHIM_MKTMP) */
	char	stage[40];
	char	detail[160];	/* why a launch description was refused */
	/* VG_SHIM_DONE: getrusage(RUSAGE_CHILDREN) once the tree is reaped
	 * (since version 2). */
	uint64_t utime_us;	/* user CPU, microseconds */
	uint64_t stime_us;	/* system CPU, microseconds */
	uint64_t maxrss_kb;	/* largest peak RSS of one process, KiB */
};

/*
 * A slot's executor.  Where the direct scheduler runs tasks one after
 * another in a slot (backends/local.c: no cgroup, GPU or private /tmp of
 * the task's own), vigil starts the shim once per slot with
 * VG_SHIM_SERVE and argc 0: it stays the init of the slot's namespaces
 * and runs one task at a time, each sent on fd 3 as a launch with
 * VG_SHIM_SERVE, its argv and environment, and four descriptors
 * (SCM_RIGHTS): the task's stdin, stdout, stderr and its report socket
 * (SOCK_SEQPACKET).  The executor forks the task, confines it as its
 * launch says, and when its main process ends kills what is left of its
 * tree (kill(-1) from the namespace's init), reaps it, and sends one
 * struct vg_shim_msg on the report socket, with the usage of that task's
 * processes only.  vigil may send a struct vg_shim_sig on the report
 * socket while the task runs: the executor sends that signal to every
 * process of the task (SIGKILL included); a signal for a task that has
 * ended goes to a closed socket and is lost, never to the next task.
 * The executor ends when fd 3 reaches end of file (vigil closed it, or
 * died): at once when idle, else once its task has ended; a task whose
 * vigil died runs on, as a shim's would.  The Landlock rule fds of the
 * first launch stay open in it for every task.
 *
 * While a task runs, vigil may send one more launch, for the task that
 * follows it in the slot: the executor holds it and starts it as soon as
 * the running task's end is reported, without waiting for vigil.  A
 * message on a held task's report socket (a signal: vigil cancelled it)
 * drops it unstarted, and the executor answers VG_SHIM_DROPPED there; a
 * held task whose socket closes, or whose vigil is gone (fd 3 at end of
 * file), is dropped without a word.  A held task is never started after
 * vigil has gone.
 */
struct vg_shim_sig {
	int32_t	sig;
};

/*
 * Checks that buf (len bytes, 8-byte aligned) is a launch description
 * this shim can use: magic, version, sizes, every count, offset and
 * string within bounds, flags and values in range.  Returns 0, or -1
 * with a one-line reason in why (whylen bytes).  Never allocates.
 */
int	vg_shim_launch_check(const void *buf, size_t len, char *why,
	    size_t whylen);

/* The string at offset off of a checked launch, or NULL for 0. */
const char *vg_shim_launch_str(const struct vg_shim_launch *l, uint32_t off);

/*
 * Points v[0..n-1] at the n strings from offset off of a checked launch
 * and sets v[n] to NULL (v has room for n + 1).
 */
void	vg_shim_launch_strv(const struct vg_shim_launch *l, uint32_t off,
	    uint32_t n, char **v);

/*
 * In the shim, before the task starts: no_new_privs, the Landlock
 * ruleset, the seccomp filter, as l says.  Returns 0, or -errno with
 * *stage naming the step.
 */
int	vg_shim_confine(const struct vg_shim_launch *l, const char **stage);

/*
 * In the task's own process, just before its execve (VG_SHIM_DROPCAPS):
 * drops every capability but l->caps_keep from the bounding set, clears
 * the ambient and inheritable sets, locks the securebits (no root
 * fix-ups, no keep-caps) and leaves permitted and effective empty, the
 * kept ones raised as ambient so they survive the execve.  A process
 * without CAP_SETPCAP (vigil not root and no user namespace) holds none
 * to drop: nothing is done.  With VG_SHIM_NOPTRACE instead (level none)
 * only CAP_SYS_PTRACE goes, from every set: the task cannot reach into
 * its supervisor, and keeps root's other powers.  Returns 0, or -errno
 * with *stage set.
 */
int	vg_shim_drop_caps(const struct vg_shim_launch *l, const char **stage);

#endif

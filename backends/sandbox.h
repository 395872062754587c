/*
 * sandbox.h - kernel confinement of local tasks: namespaces (PID for the
 * whole-tree kill; user, network and mount for `strict`), no_new_privs,
 * a seccomp filter and a Landlock ruleset.
 *
 * A sandbox is compiled once per run from the manifest's isolation
 * section (vg_sandbox_new): the seccomp program is generated with
 * libseccomp and kept as BPF, the fixed Landlock paths are opened once
 * (O_PATH) along with the GPU device nodes present (granted per attempt
 * by vg_sandbox_launch), and what the host lacks is noted as downgrades.  Each task
 * then only makes system calls, in two places:
 *
 *   clone(vg_sandbox_clone_flags())    new namespaces, if any
 *   vg_sandbox_enter()                 in that child, before it execs
 *                                      vigil-shim: user ns maps,
 *                                      loopback, host sockets hidden,
 *                                      private /tmp, /proc
 *   vg_shim_confine()                  in vigil-shim, from the launch
 *                                      vg_sandbox_launch() filled:
 *                                      no_new_privs, Landlock, seccomp
 *
 * The namespace setup happens before the exec because it needs the
 * capabilities a new user namespace grants its first process, which
 * execve(2) drops for a uid other than 0; no_new_privs, Landlock and
 * seccomp need none, and are applied by the shim.  vg_sandbox_enter is
 * async-signal-safe: it never allocates and only uses what
 * vg_sandbox_new prepared.
 */
#ifndef VG_SANDBOX_H
#define VG_SANDBOX_H

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"

struct vg_sandbox;

/* What this host offers (for vg_sandbox_new and `vigil doctor`). */
struct vg_host_caps {
	char	kernel[96];		/* uname -sr */
	int	landlock_abi;		/* 0: not available */
	int	landlock_errno;		/* why, when 0 */
	int	seccomp;		/* seccomp filters usable */
	int	root;			/* euid 0 */
	int	userns;			/* unprivileged user ns allowed */
	int	pidns;			/* a PID namespace can be made */
	int	netns;			/* a network namespace can be made */
	int	cgroup_version;		/* 1, 2, or 12 (hybrid) */
	int	cgroup_delegated;	/* our v2 cgroup is writable */
	char	cgroup_path[256];	/* our v2 cgroup directory */
};

/* Probes the host once; the result is cached.  Blocks briefly (forks a
 * probe child for the namespace checks). */
const struct vg_host_caps *vg_host_caps(void);

/*
 * The verdict of the probes of vg_host_caps that cost a child process or
 * a series of system calls (the namespaces; libseccomp's API level), as
 * a short word ("ns7.api6") for a caller that keeps it (a session, from
 * its start).  vg_host_caps_keep(word), before the first vg_host_caps of
 * the process, takes it instead of probing again: a later command gets
 * the confinement its session was started with, never another.  The
 * keep returns 0, or -1 when word is not such a verdict (then the host
 * is probed as usual).
 */
void	vg_host_caps_word(char *buf, size_t size);
int	vg_host_caps_keep(const char *word);

/*
 * Compiles the sandbox for iso on this host.  Mechanisms the host lacks
 * are left out and listed by vg_sandbox_downgrades; with iso->required
 * set, any downgrade makes this fail with VG_EUNSUPPORTED naming what is
 * missing.  *out is owned by the caller (vg_sandbox_free).
 */
int	vg_sandbox_new(const struct vg_isolation_conf *iso,
	    const char *workdir, struct vg_sandbox **out, struct vg_err *e);
void	vg_sandbox_free(struct vg_sandbox *sb);

/* "; "-separated downgrades ("no Landlock (kernel 5.10): writes not
 * confined"), or "" when the level is delivered in full; borrowed. */
const char *vg_sandbox_downgrades(const struct vg_sandbox *sb);

/*
 * Appends what a task runs with, one line: "level standard; capabilities
 * none; namespaces pid,mnt,uts,ipc; /dev/shm own; devices: no nodes,
 * ioctl on terminals and null devices only" (the named kept capabilities,
 * the listed devices and GPUs where there are).
 */
void	vg_sandbox_describe(const struct vg_sandbox *sb, struct vg_buf *out);

/*
 * Why tasks may not write the working directory (workdir of
 * vg_sandbox_new; NULL: none) they were meant to write ("'/home/a' is your home directory;
 * choose ..."), or NULL; borrowed.  backends/sandbox-workdir.h.
 */
const char *vg_sandbox_workdir_note(const struct vg_sandbox *sb);

/*
 * After an attempt: moves aside the protected entries (.git, .bashrc,
 * ...) a task made in the writable working directory where there were
 * none, appending what it moved to note; returns how many.
 */
int	vg_sandbox_sweep(const struct vg_sandbox *sb, const char *tag,
	    struct vg_buf *note);

/* The level actually delivered (none when nothing could be applied). */
enum vg_isolation_level vg_sandbox_level(const struct vg_sandbox *sb);

/* CLONE_NEW* flags the task's first process must be created with. */
unsigned long long vg_sandbox_clone_flags(const struct vg_sandbox *sb);

/* True when the task's first process is the init of a PID namespace. */
/* Whether tasks join the egress proxy's network namespace (an
 * isolation.network allow-list, as root); and that namespace (a
 * descriptor of /proc/PID/ns/net, borrowed: open while tasks start).
 * Without one, vg_sandbox_enter fails: the task does not start. */
int	vg_sandbox_egress(const struct vg_sandbox *sb);
/* Sets IFF_UP on the loopback interface of the current network
 * namespace; 0 or -errno. */
int	vg_loopback_up(void);
void	vg_sandbox_set_egress(struct vg_sandbox *sb, int nsfd);
int	vg_sandbox_pidns(const struct vg_sandbox *sb);

/* True when the task's TMPDIR is bound over /tmp (a private /tmp). */
int	vg_sandbox_private_tmp(const struct vg_sandbox *sb);

/*
 * True when a task cannot reach into a less confined process beside it
 * in its PID namespace (a slot's executor, backends/shim.h): its Landlock
 * domain forbids ptrace out of it, or the filter forbids ptrace, or
 * nothing confines the task at all.  Without Landlock and with ptrace
 * allowed a task could take over the executor and shed its seccomp
 * filter, so it gets a shim of its own instead.
 */
int	vg_sandbox_outside_shielded(const struct vg_sandbox *sb);

/* Per-task paths, all absolute; scratch_dir may be NULL. */
struct vg_sandbox_paths {
	const char	*task_dir;
	const char	*scratch_dir;
	const char	*tmp_dir;	/* private TMPDIR, under task_dir */
	/* The attempt's GPUs: how many, and their own device nodes,
	 * comma-separated ("/dev/nvidia0,/dev/nvidia3"); with ngpus > 0
	 * the shared control nodes are granted too. */
	int		 ngpus;
	const char	*gpu_devs;
};

/*
 * Why a failed task failed, when the sandbox refused it something its
 * stderr tail (text, len) names: appends "the sandbox refused writing
 * '/x' (isolation standard ...); to allow it, add it to
 * isolation.writable at WHERE" to out and returns 1; else 0.  where is
 * the manifest's isolation section ("m.yaml:4:1") or NULL.
 */
int	vg_sandbox_why(const struct vg_sandbox *sb,
	    const struct vg_sandbox_paths *p, const char *where,
	    const char *text, size_t len, struct vg_buf *out);


/*
 * In the child of clone, before it execs vigil-shim: writes the user ns maps,
 * brings loopback up in a new network namespace, makes the mounts of a
 * new mount namespace slaves of the host's, covers the host sockets
 * vg_sandbox_new chose (docs/isolation.md, "Host sockets"; at strict
 * sparing those beneath p's directories), binds tmp_dir over /tmp
 * (strict) and mounts a /proc of the new PID namespace.  Returns 0, or
 * -errno with *stage naming the step.  Async-signal-safe.
 */
int	vg_sandbox_enter(const struct vg_sandbox *sb,
	    const struct vg_sandbox_paths *p, const char **stage);

/*
 * In a child created with CLONE_NEWPID | CLONE_NEWNS and no sandbox:
 * makes its mounts slaves of the host's and mounts a /proc of its PID
 * namespace.  Returns 0, or -errno with *stage set.  Async-signal-safe.
 */
int	vg_sandbox_own_proc(const char **stage);

struct vg_shim_launch;

/*
 * Fills the confinement part of a launch description (shim.h) for p:
 * flags, Landlock attributes and rule fds (the fixed ones, then the
 * prepared ones of p's GPU nodes: read-write and ioctl on its own
 * /dev/nvidiaN or /dev/dri/renderD*, and on the control nodes).  *bpf and *nbpf receive the
 * seccomp program (borrowed from sb; 0 instructions: none) for the
 * caller to append.
 */
void	vg_sandbox_launch(const struct vg_sandbox *sb,
	    const struct vg_sandbox_paths *p, struct vg_shim_launch *l,
	    const void **bpf, unsigned *nbpf);

/* Name of a level ("none", "standard", "strict"). */
const char *vg_isolation_name(enum vg_isolation_level level);

/* Appends one doctor line per mechanism, with what to change where one
 * is missing. */
void	vg_sandbox_report(struct vg_buf *out);

#endif

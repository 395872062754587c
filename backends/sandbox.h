/*
 * sandbox.h - kernel confinement of local tasks: namespaces (PID for the
 * whole-tree kill; user, network and mount for `strict`), no_new_privs,
 * a seccomp filter and a Landlock ruleset.
 *
 * A sandbox is compiled once per run from the manifest's isolation
 * section (vg_sandbox_new): the seccomp program is generated with
 * libseccomp and kept as BPF, the fixed Landlock paths are opened once
 * (O_PATH), and what the host lacks is noted as downgrades.  Each task
 * then only makes system calls in its child process:
 *
 *   clone3(vg_sandbox_clone_flags())   new namespaces, if any
 *   vg_sandbox_enter()                 user ns maps, loopback, private /tmp
 *   vg_sandbox_confine()               no_new_privs, Landlock, seccomp
 *
 * Both child-side calls are async-signal-safe: they never allocate and
 * only use what vg_sandbox_new prepared.
 */
#ifndef VG_SANDBOX_H
#define VG_SANDBOX_H

#include "../runner/buf.h"
#include "../runner/err.h"
#include "../runner/manifest.h"

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
 * Compiles the sandbox for iso on this host.  Mechanisms the host lacks
 * are left out and listed by vg_sandbox_downgrades; with iso->required
 * set, any downgrade makes this fail with VG_EUNSUPPORTED naming what is
 * missing.  *out is owned by the caller (vg_sandbox_free).
 */
int	vg_sandbox_new(const struct vg_isolation_conf *iso,
	    struct vg_sandbox **out, struct vg_err *e);
void	vg_sandbox_free(struct vg_sandbox *sb);

/* "; "-separated downgrades ("no Landlock (kernel 5.10): writes not
 * confined"), or "" when the level is delivered in full; borrowed. */
const char *vg_sandbox_downgrades(const struct vg_sandbox *sb);

/* The level actually delivered (none when nothing could be applied). */
enum vg_isolation_level vg_sandbox_level(const struct vg_sandbox *sb);

/* CLONE_NEW* flags the task's first process must be created with. */
unsigned long long vg_sandbox_clone_flags(const struct vg_sandbox *sb);

/* True when the task's first process is the init of a PID namespace. */
int	vg_sandbox_pidns(const struct vg_sandbox *sb);

/* The fds the child needs until vg_sandbox_confine (to keep them open
 * when closing the rest); returns their count. */
int	vg_sandbox_fds(const struct vg_sandbox *sb, const int **fds);

/* Per-task paths, all absolute; scratch_dir may be NULL. */
struct vg_sandbox_paths {
	const char	*task_dir;
	const char	*scratch_dir;
	const char	*tmp_dir;	/* private TMPDIR, under task_dir */
};

/*
 * In the child, first thing after clone3: writes the user namespace maps,
 * brings loopback up in a new network namespace, makes the mounts of a
 * new mount namespace slaves of the host's, binds tmp_dir over /tmp
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

/*
 * In the child, last step before the task runs: no_new_privs, the
 * Landlock ruleset for p, the seccomp filter.  Returns 0, or -errno with
 * *stage set.  Async-signal-safe.
 */
int	vg_sandbox_confine(const struct vg_sandbox *sb,
	    const struct vg_sandbox_paths *p, const char **stage);

/* Name of a level ("none", "standard", "strict"). */
const char *vg_isolation_name(enum vg_isolation_level level);

/* Appends one doctor line per mechanism, with what to change where one
 * is missing. */
void	vg_sandbox_report(struct vg_buf *out);

#endif

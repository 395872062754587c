/*
 * cgroup.h - a control group per local task: memory and pids limits,
 * OOM accounting and a whole-tree kill, on cgroup v2, v1 or both (the
 * hybrid layout of many HPC hosts).
 *
 * A task's cgroup is made of up to three directories, one per hierarchy
 * that can deliver something:
 *
 *   v2       <task parent>/vigil-<pid>.<seq>-<name>: tracking and the
 *            tree kill (cgroup.kill), plus memory and pids when those
 *            controllers are enabled there;
 *   memory   <v1 memory mount><our path>/vigil-...: memory, when v2
 *            cannot limit it;
 *   pids     <v1 pids mount><our path>/vigil-...: pids, when v2 cannot
 *            limit it, and tracking when there is no usable v2 at all.
 *
 * Where the v2 task parent is (the no-internal-processes rule) is decided
 * by vg_cgroup_probe; docs/cgroups.md explains each case.  The parent
 * (vigil) creates the directories and writes the limits (vg_cgroup_new);
 * the task's first process joins them itself (vg_cgroup_join_self) or is
 * created inside the v2 one (clone3 CLONE_INTO_CGROUP with
 * vg_cgroup_dirfd_v2) and joins the v1 ones.  Processes are tracked by
 * the kernel from then on, including those that setsid or double-fork.
 *
 * Nothing here prints or exits.  Calls that block say so.
 */
#ifndef VG_CGROUP_H
#define VG_CGROUP_H

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

/* Largest pids.max the kernel takes (PID_MAX_LIMIT on 64-bit, 4M). */
#define VG_CGROUP_PIDS_MAX	4194304ULL

/* Bits of vg_cgroup_delivered. */
enum vg_cgroup_what {
	VG_CGROUP_MEMORY	= 1 << 0,	/* memory limit enforced */
	VG_CGROUP_PIDS		= 1 << 1,	/* pids limit enforced */
	VG_CGROUP_TREE		= 1 << 2,	/* every process tracked */
};

/* The hierarchies a task cgroup can have a directory in. */
enum vg_cgroup_hier {
	VG_CGROUP_V2 = 0,
	VG_CGROUP_V1_MEMORY,
	VG_CGROUP_V1_PIDS,
	VG_CGROUP_NHIER,
};

/* What a task asks for; 0 = no limit. */
struct vg_cgroup_limits {
	uint64_t	memory;		/* bytes (memory.max / limit_in_bytes);
					   swap is not granted on top */
	uint64_t	pids;		/* processes and threads, 1..4194304 */
	int		required;	/* a limit that cannot be delivered
					   fails vg_cgroup_new */
};

#define VG_CGROUP_PATH_MAX	512

/* How the v2 task parent was found (vg_cgroup_caps.v2_mode). */
enum vg_cgroup_v2_mode {
	VG_CGROUP_V2_NONE = 0,		/* no usable v2 cgroup */
	VG_CGROUP_V2_ENABLED,		/* our cgroup already enables the
					   controllers for its children */
	VG_CGROUP_V2_ROOT,		/* we are in the root cgroup (exempt
					   from the no-internal-processes
					   rule): enable them there */
	VG_CGROUP_V2_LEAF,		/* we are alone in our cgroup: move
					   into <ours>/vigil.main, enable them
					   in ours */
	VG_CGROUP_V2_SIBLING,		/* our parent enables them and is
					   writable: tasks become siblings */
	VG_CGROUP_V2_TRACK,		/* writable, but neither memory nor
					   pids can be enabled: tracking and
					   kill only */
};

/*
 * What this host offers.  Directories are absolute; "" when unusable,
 * with the reason in the matching why_* field.
 */
struct vg_cgroup_caps {
	char			v2_mount[VG_CGROUP_PATH_MAX];
	char			v2_self[VG_CGROUP_PATH_MAX];	/* our cgroup */
	char			v2_parent[VG_CGROUP_PATH_MAX];	/* tasks' */
	enum vg_cgroup_v2_mode	v2_mode;
	int			v2_memory;	/* controllers usable below */
	int			v2_pids;	/* v2_parent */
	int			v2_kill;	/* cgroup.kill (5.14) */
	char			v1_memory[VG_CGROUP_PATH_MAX];
	int			v1_memsw;	/* memory.memsw.* (swap acct) */
	char			v1_pids[VG_CGROUP_PATH_MAX];
	char			why_v2[384];
	char			why_memory[768];
	char			why_pids[768];
};

struct vg_cgroup;

/*
 * Probes the host into *c: cgroup mounts (/proc/self/mountinfo), our
 * cgroups (/proc/self/cgroup), which hierarchies are writable and which
 * controllers they offer.  Changes nothing.  Returns 0 (a host without
 * any usable cgroup is a result, not an error).
 */
int	vg_cgroup_probe(struct vg_cgroup_caps *c);

/*
 * Creates the task cgroup for lim under caps (NULL: probe the host, once
 * per process) and writes the limits.  name (1..64 of [A-Za-z0-9._-],
 * e.g. "<run>-<task>-<attempt>") is part of the directory names, with our
 * pid and a counter, so concurrent tasks never collide.  With caps in
 * VG_CGROUP_V2_ROOT or _LEAF mode, the first call enables memory and
 * pids in our cgroup (_LEAF: after moving this process into
 * <ours>/vigil.main).
 *
 * A limit no hierarchy can deliver is a downgrade (vg_cgroup_downgrades)
 * or, with lim->required, VG_EUNSUPPORTED naming what is missing and what
 * to change.  Bad limits or name: VG_EINVAL; a failed mkdir or write:
 * VG_EIO with the path.  On success *out is the caller's (vg_cgroup_free);
 * it may deliver nothing at all (vg_cgroup_delivered() == 0).
 */
int	vg_cgroup_new(const struct vg_cgroup_caps *caps,
	    const struct vg_cgroup_limits *lim, const char *name,
	    struct vg_cgroup **out, struct vg_err *e);

/* Appends to out ("; "-separated) the downgrades vg_cgroup_new would
 * make for lim on this host, without creating anything. */
void	vg_cgroup_plan_downgrades(const struct vg_cgroup_limits *lim,
	    struct vg_buf *out);

/* enum vg_cgroup_what bits this cgroup delivers. */
unsigned vg_cgroup_delivered(const struct vg_cgroup *cg);

/* "; "-separated downgrades ("no cgroup memory limit (...)"), or "" when
 * every asked limit is enforced; borrowed. */
const char *vg_cgroup_downgrades(const struct vg_cgroup *cg);

/* The directory of cg in hierarchy h, or NULL; borrowed. */
const char *vg_cgroup_dir(const struct vg_cgroup *cg,
	    enum vg_cgroup_hier h);

/*
 * The cgroup.procs fds (O_WRONLY|O_CLOEXEC) the task's first process
 * writes to; returns their count (0..3).  A child that closes the other
 * fds before joining keeps these.  Borrowed.
 */
int	vg_cgroup_procs_fds(const struct vg_cgroup *cg, const int **fds);

/*
 * In the child, before exec: moves the calling process into every
 * hierarchy of cg ("0" to each cgroup.procs).  Returns 0 or -errno of the
 * first failed write.  Async-signal-safe.
 */
int	vg_cgroup_join_self(const struct vg_cgroup *cg);

/* An O_DIRECTORY fd of the v2 directory, for clone3's
 * CLONE_INTO_CGROUP (Linux 5.7), or -1 without one.  Borrowed. */
int	vg_cgroup_dirfd_v2(const struct vg_cgroup *cg);

/*
 * The number of processes the kernel OOM-killed in cg because of its
 * memory limit (v2 memory.events, v1 memory.oom_control `oom_kill`);
 * 0 without a memory cgroup.  VG_EIO when the file cannot be read.
 */
int	vg_cgroup_oom_kills(const struct vg_cgroup *cg, uint64_t *n,
	    struct vg_err *e);

/*
 * The peak memory use of cg in bytes since it was made (v2 memory.peak,
 * Linux 5.19; v1 memory.max_usage_in_bytes): the whole tree at once,
 * page cache included.  *n is 0 and the call returns 0 when cg has no
 * memory hierarchy or the kernel keeps no peak; VG_EIO when the file
 * cannot be read.  Read it before vg_cgroup_free removes the cgroup.
 */
int	vg_cgroup_memory_peak(const struct vg_cgroup *cg, uint64_t *n,
	    struct vg_err *e);

/*
 * Kills every process in cg with SIGKILL until all hierarchies are empty:
 * cgroup.kill on v2, else forks blocked (pids.max 0) and every listed
 * process signalled through a pidfd, round after round.  Blocks up to
 * about 2 seconds; VG_ETIMEOUT if processes remain (stuck in D state),
 * VG_EIO on a failed write.  Zombies (exited, not yet reaped by their
 * parent) are no longer members.
 */
int	vg_cgroup_kill(struct vg_cgroup *cg, struct vg_err *e);

/* Kills what is left (bounded, as vg_cgroup_kill), closes the fds and
 * removes the directories.  Accepts NULL. */
void	vg_cgroup_free(struct vg_cgroup *cg);

/* Appends `vigil doctor` lines: version and delegation, which limits the
 * local backend delivers, and what to change where one is missing. */
void	vg_cgroup_report(const struct vg_cgroup_caps *c, struct vg_buf *out);

#endif

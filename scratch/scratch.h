/*
 * scratch.h - per-task scratch directories on the cluster's scratch
 * filesystem.
 *
 * The base directory is chosen once per run (vg_scratch_base) and resolved
 * to a path without symbolic links.  Each task gets
 * <base>/vigil/<run>/<task>, mode 0700, created with mkdirat/openat and
 * O_NOFOLLOW at every level, so a symlink planted on a shared filesystem
 * cannot redirect it (vg_scratch_task_dir).  A small owner record beside
 * the task directory (<base>/vigil/<run>/.task-<i>.owner: host, pid,
 * process start time) tells `vigil scratch gc` that the run is still in
 * use; vg_scratch_finish applies scratch.keep and drops the record.  The
 * records of one process are hard links to one file of its own,
 * <base>/vigil/<run>/.proc-<host>.<pid> (a file of their own where links
 * fail), which goes with the last of them.
 *
 * Deciding whether a run is still running belongs to the caller: the gc
 * and list functions take a callback; vg_scratch_owner_running is the
 * default, based on the owner records alone.
 */
#ifndef VG_SCRATCH_H
#define VG_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "runner/manifest/manifest.h"

/* Free space a task directory needs when scratch.min_free is 0. */
#define VG_SCRATCH_MIN_FREE_DEFAULT	(1024ULL * 1024 * 1024)	/* 1 GiB */

/* Site scratch root probed for <root>/$USER. */
#define VG_SCRATCH_SITE_ROOT		"/scratch"

/*
 * Chooses the scratch base directory, in this order: conf->path,
 * $VIGIL_SCRATCH, /scratch/$USER when it is a writable directory owned by
 * the user, $SCRATCH, $SLURM_TMPDIR, $TMPDIR, then state_dir.  The first
 * two are explicit: when set but unusable the call fails instead of
 * falling back (they are created, mode 0700, when missing).  The others
 * are skipped when unusable, and the reason says so.
 *
 * On success *base_out is the chosen directory with symbolic links
 * resolved and *reason_out one line saying why ("$VIGIL_SCRATCH",
 * "/scratch/alice is writable", ...); both belong to the caller.  conf may
 * be NULL.  Both outputs are NULL on failure.  Does not block beyond
 * stat(2) calls.
 */
int	vg_scratch_base(const struct vg_scratch_conf *conf,
	    const char *state_dir, char **base_out, char **reason_out,
	    struct vg_err *e);
/* Same, probing site_root/$USER instead of /scratch/$USER (sites with
 * /gpfs/scratch; tests). */
int	vg_scratch_base_in(const struct vg_scratch_conf *conf,
	    const char *state_dir, const char *site_root, char **base_out,
	    char **reason_out, struct vg_err *e);

/*
 * Creates (or reuses) <base>/vigil/<run_id>/<task_index>, mode 0700, and
 * records the calling process as its owner.  Every component of the path,
 * base included, is opened with O_NOFOLLOW|O_DIRECTORY from "/": a
 * symbolic link anywhere fails with VG_EDENIED naming it; a directory
 * below base owned by another user fails the same way.  Then checks that
 * the filesystem has at least VG_SCRATCH_MIN_FREE_DEFAULT bytes free
 * (VG_ELIMIT otherwise).  run_id must be a single path component.
 * *path_out belongs to the caller (NULL on failure).
 */
int	vg_scratch_task_dir(const char *base, const char *run_id,
	    int task_index, char **path_out, struct vg_err *e);
/* Same with a free-space minimum in bytes (0 = the default). */
int	vg_scratch_task_dir_min(const char *base, const char *run_id,
	    int task_index, uint64_t min_free, char **path_out,
	    struct vg_err *e);

/*
 * Free-space preflight: fails with VG_ELIMIT when the filesystem holding
 * dir has fewer than min_free bytes available to unprivileged users
 * (statvfs f_bavail).  The message names dir, the free space and the
 * minimum.
 */
int	vg_scratch_preflight(const char *dir, uint64_t min_free,
	    struct vg_err *e);

/*
 * Applies scratch.keep at the end of a task: removes path (without
 * following symbolic links) for VG_KEEP_NEVER, and for
 * VG_KEEP_ON_FAILURE when task_succeeded; keeps it otherwise.  Drops the
 * task's owner record either way, and the run directory once empty.
 */
int	vg_scratch_finish(const char *path, enum vg_keep keep,
	    int task_succeeded, struct vg_err *e);

/* Whether run_id is still running: 1 yes, 0 no.  Errors count as yes. */
typedef int (*vg_scratch_running_fn)(const char *base, const char *run_id,
    void *arg);

/*
 * Default vg_scratch_running_fn: a run is running while one of its owner
 * records names a live process (same host: the pid exists with the
 * recorded start time) or a process on another host (which cannot be
 * checked from here).
 */
int	vg_scratch_owner_running(const char *base, const char *run_id,
	    void *arg);

/* Formats n bytes as "512 B" or "1.5 GiB" into buf (len bytes); returns
 * buf.  For reports about scratch space. */
const char *vg_scratch_fmt_size(uint64_t n, char *buf, size_t len);

/* One run's scratch directory. */
struct vg_scratch_run {
	char		*run_id;
	char		*path;		/* <base>/vigil/<run_id> */
	uint64_t	 bytes;		/* allocated (st_blocks), no symlinks */
	size_t		 tasks;		/* task directories */
	double		 mtime;		/* newest task directory mtime */
	int		 running;
	char		*owner;		/* "host pid N" of a live owner, or NULL */
};

struct vg_scratch_list {
	struct vg_scratch_run	*v;
	size_t			 n;
};

/*
 * Lists the runs under <base>/vigil, sorted by run id.  running(base, run,
 * arg) decides each run's state (NULL = vg_scratch_owner_running).  out is
 * filled on success and released by the caller with
 * vg_scratch_list_release.  A missing <base>/vigil is an empty list.
 */
int	vg_scratch_list(const char *base, vg_scratch_running_fn running,
	    void *arg, struct vg_scratch_list *out, struct vg_err *e);
void	vg_scratch_list_release(struct vg_scratch_list *l);

/*
 * Removes the scratch directories of finished runs under <base>/vigil and
 * never those of running ones (as running() says; NULL = owner records).
 * freed receives the removed runs (or those that would be, with dry_run)
 * with their sizes; the caller releases it.  Stops at the first removal
 * that fails, with freed holding what went before.
 */
int	vg_scratch_gc(const char *base, vg_scratch_running_fn running,
	    void *arg, int dry_run, struct vg_scratch_list *freed,
	    struct vg_err *e);

#endif

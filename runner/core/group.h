/*
 * group.h - concurrency groups: runs of one group (manifest
 * `concurrency.group`, default the manifest name) must not overlap.
 *
 * A run holds its group while any of its tasks can still run:
 *   - its driving vigil holds an exclusive flock(2) on
 *     $VIGIL_HOME/locks/<group>.lock (a foreground run, the detached
 *     driver of `vigil submit`, which inherits the descriptor, and
 *     `vigil resume`).  The kernel drops the lock when the last
 *     descriptor closes, so a driver killed with SIGKILL never blocks
 *     the next run;
 *   - or it is recorded PENDING or RUNNING in the group and its recorded
 *     owner is alive (pid plus /proc start time: a run with overlap
 *     `allow` takes no lock but is still seen);
 *   - or its vigil is gone but its scheduler runs attempts outside vigil
 *     (not VG_SCAP_LOCAL: Slurm) and it has unfinished tasks handed over
 *     (a job id recorded): its jobs may still be queued or running.
 * A run whose local vigil is gone (INTERRUPTED) does not hold its group.
 *
 * Locks are per host: flock on NFS or Lustre does not exclude other
 * hosts reliably, and pids mean nothing across hosts.  When the lock
 * directory is on a shared file system, vg_group_acquire warns once.
 */
#ifndef VG_GROUP_H
#define VG_GROUP_H

#include <sys/types.h>

#include "common/err.h"
#include "runner/core/store.h"
#include "runner/manifest/manifest.h"

/* concurrency.overlap */
enum vg_overlap {
	VG_OVERLAP_ALLOW = 0,	/* no lock; seen by the others */
	VG_OVERLAP_SKIP,	/* held: record SKIPPED, exit 0 */
	VG_OVERLAP_WAIT,	/* held: wait for the holder, bounded */
	VG_OVERLAP_REPLACE,	/* held: cancel the holder, then run */
};

/* Parses concurrency.overlap; NULL gives allow, or skip when cron.
 * Returns -1 for an unknown name. */
int	vg_overlap_parse(const char *name, int cron);
const char *vg_overlap_name(enum vg_overlap o);

/* The group of m: concurrency.group, else the name, else the manifest
 * file's base name without its extension.  Caller frees. */
char	*vg_group_of(const struct vg_manifest *m);

/* A held group lock; fd -1 when none. */
struct vg_group {
	int		 fd;
	char		*name;
	char		*path;		/* the lock file */
};

#define VG_GROUP_INIT	{ -1, NULL, NULL }

/* What vg_group_acquire asks for. */
struct vg_group_req {
	const char	*home;		/* VIGIL_HOME */
	const char	*name;		/* the group */
	enum vg_overlap	 overlap;	/* not ALLOW */
	double		 wait;		/* seconds: bound of wait and of
					   replace's wait for the holder */
	const char	*self;		/* the run that will hold it (its id
					   is written in the lock file and
					   it is never its own holder) */
};

/* How it went. */
struct vg_group_result {
	int		 held;		/* 1: not acquired (skip, or the wait
					   ran out) */
	char		 holder[VG_RUN_ID_MAX];	/* "" when unknown */
	pid_t		 holder_pid;	/* 0 when none is alive */
	int		 replaced;	/* replace cancelled the holder */
	double		 waited;	/* seconds spent waiting */
	char		 why[320];	/* one line when held */
};

/*
 * Takes group rq->name for run rq->self per rq->overlap.  On 0 with
 * res->held 0, g holds the lock (release with vg_group_release, or let
 * the process exit; a forked child inherits it).  On 0 with res->held 1
 * the group is held by res->holder and g holds nothing.  replace cancels
 * the holder as `vigil cancel` does (its live vigil through the cancel
 * marks and SIGTERM; without one, vg_run_cancel_orphan) and waits for
 * it.  Blocks for at most rq->wait (wait, replace) or about a second
 * (skip).
 */
int	vg_group_acquire(struct vg_store *st, const struct vg_group_req *rq,
	    struct vg_group *g, struct vg_group_result *res,
	    struct vg_err *e);

/* Drops the lock (closing the descriptor) and frees g's strings. */
void	vg_group_release(struct vg_group *g);

/*
 * Finds a run other than self that holds group name per the rules above
 * (the lock file is not looked at).  Returns 0 with *found set and h
 * filled when found.
 */
int	vg_group_holder(struct vg_store *st, const char *name,
	    const char *self, struct vg_group_result *h, int *found,
	    struct vg_err *e);

/* Appends the lock file's name for group name (safe characters kept,
 * others as %XX) to out. */
void	vg_group_file(const char *name, struct vg_buf *out);

#endif

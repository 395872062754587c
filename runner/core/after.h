/*
 * after.h - how a run waits for the runs its manifest names in after:
 * (runner/manifest/after.c parses them).  The run driver asks
 * vg_after_check before it starts first attempts, and again while they
 * wait; the answer is one of:
 *
 *   OPEN     every run waited for ended as asked: start
 *   WAIT     some run is still going: start nothing yet (why says which)
 *   HANDOFF  the scheduler can hold the attempts itself (VG_SCAP_DEPEND,
 *            e.g. Slurm --dependency): start them with deps set
 *   NEVER    some run ended so that its condition can never be met: the
 *            tasks end DEPENDENCY_NEVER_SATISFIED (why says which)
 */
#ifndef VG_CORE_AFTER_H
#define VG_CORE_AFTER_H

#include "runner/core/store.h"
#include "schedulers/scheduler.h"

enum vg_after_verdict {
	VG_AFTER_OPEN,
	VG_AFTER_WAIT,
	VG_AFTER_HANDOFF,
	VG_AFTER_NEVER,
};

/* What vg_after_check found; release with vg_after_release. */
struct vg_after_state {
	enum vg_after_verdict	 verdict;
	char			 why[256];
	struct vg_sched_dep	*deps;		/* HANDOFF: one per run */
	size_t			 ndeps;
};

/*
 * The id of the run ref names: the run with exactly that id, else the
 * newest run named ref created before `before` (a run's creation time; 0
 * = any).  VG_ENOENT with a message naming ref when there is none.
 */
int	vg_after_resolve(struct vg_store *st, const char *ref, double before,
	    char id[VG_RUN_ID_MAX], struct vg_err *e);

/*
 * Checks the runs m waits for, for a run created at `created` that runs
 * on scheduler ops.  Fills out (released first); returns 0, or a store
 * error, or VG_ENOENT when a run named cannot be found.
 */
int	vg_after_check(struct vg_store *st, const struct vg_manifest *m,
	    double created, const struct vg_scheduler_ops *ops,
	    struct vg_after_state *out, struct vg_err *e);

void	vg_after_release(struct vg_after_state *s);

#endif

/*
 * scheduler.h - schedulers decide when and where attempts run: `direct`
 * runs them on this host (up to --jobs at once, or as srun steps inside a
 * Slurm allocation), `slurm` submits them to a cluster as batch jobs and
 * job arrays.  One file per scheduler, each exporting one const struct
 * vg_scheduler_ops; scheduler.c holds the table and the wrappers.
 *
 * The run driver (runner/core/run.c) owns the loop and is scheduler-agnostic:
 *
 *   open        once per run
 *   submit      hands attempts over (direct: start now or queue; slurm:
 *               collect, then flush sends them as arrays, chunked)
 *   poll        waits for changes, at most timeout_ms or until wake_fd is
 *               readable (signals, cancel requests), and returns a batch
 *               of updates; slurm makes at most one batched query per
 *               call, rate-limited
 *   cancel      stops given attempts; never blocks on their end
 *   reattach    after a crash, takes back an attempt recorded as in
 *               flight (job id for slurm; with no id recorded, slurm
 *               looks the attempt up in its job journal)
 *   close       releases everything; running attempts are left alone
 *   cancel_orphans  without open: stops what the scheduler still holds of
 *               a run whose vigil is gone (vigil cancel), so that the
 *               driver's store path can record the tasks CANCELLED
 *
 * The driver records every update in the store before acting on it, so a
 * kill -9 at any point loses nothing that was reported.
 */
#ifndef VG_SCHEDULER_H
#define VG_SCHEDULER_H

#include "backends/backend.h"
#include "common/err.h"
#include "common/state.h"

struct vg_store;

/* What a scheduler reports about one attempt. */
struct vg_sched_update {
	struct vg_attempt	*a;		/* as submitted */
	enum vg_state		 state;		/* new state */
	struct vg_result	 result;	/* filled when terminal */
	char			 handle[64];	/* job id / pid, when new */
	char			 reason[256];	/* pending reason etc. */
};

/* An unfinished task of a run whose vigil is gone, for cancel_orphans. */
struct vg_sched_orphan {
	int			 index;		/* task */
	int			 attempt;	/* attempts started so far */
	const char		*handle;	/* as recorded; "" when none */
};

/* A scheduler instance for one run. */
struct vg_sched {
	const struct vg_scheduler_ops	*ops;
	const struct vg_manifest	*m;
	const char			*run_id;
	const char			*run_dir;
	struct vg_store			*store;
	int				 jobs;		/* direct: parallelism */
	void				*priv;
	/* Backend for every attempt; NULL = by the manifest's name. */
	const struct vg_backend_ops	*backend;
	/* Set by open: how many attempts the scheduler wants in hand at
	 * once (submitted and not yet terminal); the driver keeps the rest
	 * itself.  0 = no limit (slurm takes everything for arrays). */
	int				 window;
	/* Set by open: attempts run through `vigil task-exec` elsewhere
	 * (Slurm jobs, job steps), which makes their scratch directories
	 * where they land; the driver makes none here. */
	int				 remote;
};

struct vg_scheduler_ops {
	const char	*name;

	int	(*open)(struct vg_sched *s, struct vg_err *e);
	/* Takes a (borrowed until its terminal update is returned). */
	int	(*submit)(struct vg_sched *s, struct vg_attempt *a,
		    struct vg_err *e);
	/* Sends what submit collected; optional (direct starts at once). */
	int	(*flush)(struct vg_sched *s, struct vg_err *e);
	/* Fills *ups (scheduler-owned until the next poll) with *n changes. */
	int	(*poll)(struct vg_sched *s, int timeout_ms, int wake_fd,
		    struct vg_sched_update **ups, size_t *n, struct vg_err *e);
	/* Stops a: SIGTERM, then SIGKILL after the attempt's kill_grace; a
	 * second cancel of the same attempt sends SIGKILL at once (forced
	 * cancel).  An attempt not started yet is dropped and reported
	 * CANCELLED by the next poll.  Never blocks. */
	int	(*cancel)(struct vg_sched *s, struct vg_attempt *a,
		    struct vg_err *e);
	/* Re-adopts an in-flight attempt of a dead vigil by its handle, or
	 * with an empty handle by what the scheduler recorded itself;
	 * VG_ENOENT when it never handed the attempt on.  Optional. */
	int	(*reattach)(struct vg_sched *s, struct vg_attempt *a,
		    const char *handle, struct vg_err *e);
	/* Number of attempts submitted and not yet reported terminal. */
	size_t	(*active)(struct vg_sched *s);
	void	(*close)(struct vg_sched *s);
	/* Stops, with no instance open, what is left in flight of the
	 * unfinished tasks v (n of them) of run run_id in run_dir, whose
	 * vigil is gone; whole: the whole run is cancelled, not one task.
	 * Appends what it stopped, for the user, to said.  On failure the
	 * caller records nothing, and e says so.  Blocks on the scheduler's
	 * commands.  Optional (direct: nothing outlives the run's
	 * processes, which the caller kills). */
	int	(*cancel_orphans)(const char *run_id, const char *run_dir,
		    const struct vg_sched_orphan *v, size_t n, int whole,
		    struct vg_buf *said, struct vg_err *e);
};

extern const struct vg_scheduler_ops vg_scheduler_direct;
extern const struct vg_scheduler_ops vg_scheduler_slurm;

extern const struct vg_scheduler_ops *const vg_schedulers[];

const struct vg_scheduler_ops *vg_scheduler_find(const char *name);

#endif

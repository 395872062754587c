/*
 * run.h - creating a run and driving it to the end.
 *
 * The command layer loads and expands the manifest and asks the policy
 * gate about every task; vg_run_create records the run (denied tasks
 * become DENIED and never run), and vg_run_drive hands the runnable tasks
 * to the scheduler, records every update in the store before acting on it,
 * retries per the manifest, and returns when every task is terminal or the
 * run was cancelled.  vg_run_drive is also the whole of `vigil resume` and
 * of the detached half of `vigil submit`: it starts from whatever the
 * store says, so a run whose vigil was killed continues where it stopped.
 *
 * Crash rules (docs/state.md): an attempt recorded QUEUED or RUNNING when
 * a new driver takes the run over was interrupted; its processes are
 * killed (pid + start time, then every process carrying the run's
 * VIGIL_RUN_ID), the attempt is recorded LOST with reason "interrupted:
 * vigil exited", and the task runs again without the attempt counting
 * against retry.max.  Schedulers with reattach (slurm) take such attempts
 * back instead.
 */
#ifndef VG_RUN_H
#define VG_RUN_H

#include <stddef.h>

#include "schedulers/scheduler.h"
#include "runner/manifest/manifest.h"
#include "common/state.h"
#include "runner/core/store.h"
#include "runner/manifest/task.h"

struct vg_progress;

/* What vg_run_create needs. */
struct vg_run_plan {
	const char		*id;		/* vg_run_id_make */
	const struct vg_manifest *m;
	const struct vg_taskset	*ts;
	const char		*manifest_json;	/* vg_manifest_to_json */
	const char		*origin_json;	/* vg_origin_to_json, or NULL */
	/* NULL, or ts->n entries: the reason a task was denied, NULL for
	 * an allowed task. */
	char *const		*denied;
};

/*
 * Records a new run: the run directory $home/runs/<id>/ (0700) with
 * manifest.json (and origin.json when p has one), the run row and one
 * row per task (DENIED ones with their reason), in one transaction.  Returns the run directory in *dirp
 * (caller frees).  Blocks on disk I/O.
 */
int	vg_run_create(struct vg_store *st, const struct vg_run_plan *p,
	    char **dirp, struct vg_err *e);

/* How a run is driven. */
struct vg_run_opts {
	int			 jobs;		/* direct: 0 = number of CPUs */
	/* Overrides for tests and task-exec; NULL = by manifest name. */
	const struct vg_backend_ops	*backend;
	const struct vg_scheduler_ops	*sched;
	/* Block SIGINT, SIGTERM, SIGHUP and SIGUSR1 and read them from a
	 * signalfd: the first SIGINT/SIGTERM/SIGHUP cancels, a second
	 * SIGINT forces (SIGKILL), SIGUSR1 re-reads per-task cancel marks.
	 * The mask is restored on return. */
	int			 signals;
	struct vg_progress	*progress;	/* NULL = quiet */
	/* NULL, or gets one line per notification of the run's end that
	 * was not delivered (vg_notify_run): for the --cron summary. */
	struct vg_strv		*undelivered;
};

/* How a run ended. */
struct vg_run_result {
	enum vg_state	 state;		/* SUCCEEDED, FAILED, CANCELLED, DENIED */
	int		 counts[VG_ST__COUNT];
	int		 ntasks;
};

/*
 * Drives run run_id (created by vg_run_create; ts must be the expansion
 * of m, which is the run's stored manifest) until every task is terminal,
 * or cancelled.  Records this process as the run's owner.  Fails with
 * VG_ESTATE when another live vigil owns the run.  Blocks; returns 0 with
 * res filled whenever the run ended (in any state).
 */
int	vg_run_drive(struct vg_store *st, const char *run_id,
	    const struct vg_manifest *m, const struct vg_taskset *ts,
	    const struct vg_run_opts *o, struct vg_run_result *res,
	    struct vg_err *e);

/*
 * Resets the unsuccessful tasks of an ended run (every terminal state
 * but SUCCEEDED and DENIED) to PENDING with a fresh retry budget; *n gets
 * how many.  The caller drives the run afterwards.
 */
int	vg_run_reset_failed(struct vg_store *st, const char *run_id, int *n,
	    struct vg_err *e);

/* The exit status for a result: 0, 1 (failed), 3 (denied), 5 (cancelled). */
int	vg_run_exit_status(const struct vg_run_result *r);

/* Appends "x=1 y=a" (the task's matrix values) to b; "-" when none. */
void	vg_task_label(const struct vg_task *t, struct vg_buf *b);

/* Appends the matrix values of t as a JSON object to b. */
void	vg_task_matrix_json(const struct vg_task *t, struct vg_buf *b);

/*
 * vigil cancel of run r when no vigil drives it any more (task -1: the
 * whole run, else that task): kills the run's leftover processes, has
 * the run's scheduler (by its recorded name) stop what it still holds
 * through its cancel_orphans operation, then records the unfinished tasks
 * CANCELLED, and the run too when none is left, in one transaction.
 * Appends what was stopped, for the user, to said.  When the scheduler
 * fails nothing is recorded.  Blocks on the scheduler's commands.
 */
int	vg_run_cancel_orphan(struct vg_store *st, const struct vg_run_info *r,
	    int task, struct vg_buf *said, struct vg_err *e);

/*
 * Removes what the backend of run r (by its recorded name) left of task
 * `task` (-1: of every task): kills monitors that outlived their vigil,
 * then the backend's reap with the run's stored manifest (containers,
 * remote tasks and directories, sandboxes).  Appends what it removed to
 * said.  For vigil cancel of an orphaned run and vigil gc.
 */
int	vg_run_reap(struct vg_store *st, const struct vg_run_info *r,
	    int task, struct vg_buf *said, struct vg_err *e);

/* True when the process recorded as the run's owner is alive (a driver
 * recorded on another host is taken as alive). */
int	vg_run_owner_alive(const struct vg_run_info *r);

/* True when the run's driver is recorded on another host (its pid means
 * nothing here: it cannot be looked at or signalled from this host). */
int	vg_run_owner_elsewhere(const struct vg_run_info *r);

/*
 * Makes this process the driver of run r, atomically: fails with
 * VG_EAGAIN, naming the driver's pid and host, when a live vigil drives
 * it or another claims it first; a dead driver's claim is taken over.
 * r is updated to the new owner (or re-read to name the winner).  resume,
 * retry, cancel of an orphan and the driver call it before they change
 * anything of the run.
 */
int	vg_run_claim(struct vg_store *st, struct vg_run_info *r,
	    struct vg_err *e);

/* The directory of task index of the run in run_dir ("RUN/tasks/I");
 * caller frees. */
char	*vg_run_task_dir(const char *run_dir, int index);

#endif

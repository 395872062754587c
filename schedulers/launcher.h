/*
 * launcher.h - how the direct scheduler starts an attempt on this host
 * and learns how it ended.  direct.c owns the slots, the poll loop, the
 * queue and the deadlines; a launcher owns what one attempt's process
 * is.  The direct scheduler opens one launcher per run, the first that
 * applies here of the schedulers' own (their ops' launcher, in the order
 * of vg_schedulers[]) and the backend's:
 *
 *   srun      (slurm's) inside a Slurm allocation when
 *             vg_slurm_steps_wanted says so (slurm-step.c): the process
 *             is `srun ... vigil task-exec`, the result comes from the
 *             task's record
 *   backend   everywhere else: the process is the backend's start
 *
 * Life of an attempt: start, then (the process reaped) ended until it
 * knows the result, then cleanup; signal on a time-out or cancel while
 * the process runs.
 */
#ifndef VG_LAUNCHER_H
#define VG_LAUNCHER_H

#include "backends/backend.h"
#include "common/err.h"
#include "schedulers/scheduler.h"

struct vg_launcher;

/* What ended says about an attempt whose process was reaped. */
enum vg_launch_end {
	VG_LAUNCH_WAIT,		/* not known yet: ask again shortly */
	VG_LAUNCH_DONE,		/* r filled */
	VG_LAUNCH_RECORDED,	/* r filled, and it already accounts for a
				 * time-out the launcher's side enforced */
};

struct vg_launcher_ops {
	const char	*name;
	/* Attempts run through `vigil task-exec`, which makes their
	 * scratch (sets vg_sched.remote). */
	int		 remote;
	/* 1 when the launcher applies here (l->priv set up, s->jobs given
	 * a default when it was <= 0 and the launcher knows one), 0 when it
	 * does not, or a negative vg_rc.  NULL = always applies.  Does not
	 * block. */
	int	(*open)(struct vg_launcher *l, struct vg_sched *s,
		    struct vg_err *e);
	/* Starts a without waiting for its end; sets a->pid (and a->pidfd
	 * when it has one). */
	int	(*start)(struct vg_launcher *l, struct vg_attempt *a,
		    struct vg_err *e);
	/* Seconds past a's timeout before the scheduler stops a itself;
	 * NULL = none (the timeout is the scheduler's to enforce). */
	double	(*slack)(const struct vg_attempt *a);
	/* Sends sig to the running attempt a, like kill(2); errors are
	 * ignored.  srun: through scancel, which may block up to 10 s. */
	void	(*signal)(struct vg_launcher *l, struct vg_attempt *a,
		    int sig);
	/* How a ended, its process reaped with wait status ws waited_ms
	 * ago; stopping: the scheduler timed a out or cancelled it.  Reads
	 * files at most; never waits. */
	enum vg_launch_end (*ended)(struct vg_launcher *l,
		    struct vg_attempt *a, int ws, long long waited_ms,
		    int stopping, struct vg_result *r);
	/* Releases what start made; optional. */
	void	(*cleanup)(struct vg_launcher *l, struct vg_attempt *a);
	/* Releases l->priv; optional. */
	void	(*close)(struct vg_launcher *l);
};

/* One open launcher; direct.c holds it by value. */
struct vg_launcher {
	const struct vg_launcher_ops	*ops;
	const struct vg_backend_ops	*backend;	/* the run's backend */
	void				*priv;		/* the launcher's */
};

extern const struct vg_launcher_ops vg_launcher_backend;   /* launcher.c */
extern const struct vg_launcher_ops vg_launcher_srun;      /* slurm-step.c */

/*
 * Opens in l the first launcher that applies to scheduler s whose
 * attempts use backend (srun steps, else the backend's own start), and
 * sets s->remote.  Fails with the launcher's error
 * (VIGIL_SLURM_STEPS=always outside an allocation, say).  Does not
 * block; vg_launcher_close releases l.
 */
int	vg_launcher_open(struct vg_launcher *l,
	    const struct vg_backend_ops *backend, struct vg_sched *s,
	    struct vg_err *e);

/* Releases what vg_launcher_open set up in l. */
void	vg_launcher_close(struct vg_launcher *l);

#endif /* VG_LAUNCHER_H */

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
extern const struct vg_launcher_ops vg_launcher_qrsh;  /* gridengine-step.c */

/*
 * The environment of an executor that runs `vigil task-exec` for a:
 * vigil's own (the allocation's variables included) without
 * VIGIL_ATTEMPT and VIGIL_TIMEOUT, then those of a; with gpus, the
 * CUDA_VISIBLE_DEVICES the direct scheduler's pool gave a, when it did.
 */
void	vg_launch_env(const struct vg_attempt *a, int gpus,
	    struct vg_strv *env);

/*
 * How an attempt run by `vigil task-exec` through a cluster's command
 * ended, its command reaped with wait status ws waited_ms ago: its
 * result record when task-exec wrote one (RECORDED, or DONE for a
 * cancel), else what verdict makes of the command's output log
 * (TASK_DIR/step.log) once it explains the end, or once grace seconds
 * passed or stopping (then final); WAIT until then.  who names the
 * command in the debug line.
 */
enum vg_launch_end vg_launch_ended(struct vg_attempt *a, int ws,
	    long long waited_ms, int stopping, double grace, const char *who,
	    int (*verdict)(const char *log, int ws, int final,
	    struct vg_result *r), struct vg_result *r);

/* The last 8 KiB of TASK_DIR/step.log (an executor's own output: srun's
 * or qrsh's lines come last), read beneath the task directory without
 * following a link; "" when there is none.  Caller frees. */
char	*vg_launch_log_tail(const char *task_dir);

/* The fewest CPUs one task of m asks (1 when none says): the unit a
 * cluster launcher's default --jobs divides its CPUs or slots by. */
int	vg_launch_least_cpus(const struct vg_manifest *m);

/*
 * Starts argv (argv->v[0] looked up in $PATH) with environment env for
 * a: stdin /dev/null, stdout and stderr into TASK_DIR/log_name (opened
 * beneath the task directory, a planted link refused), the signals
 * vigil reads back to their defaults, in a process group of its own.
 * Sets a->pid and a->started.  Does not wait.
 */
int	vg_launch_spawn(struct vg_attempt *a, const struct vg_strv *argv,
	    const struct vg_strv *env, const char *log_name,
	    struct vg_err *e);

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

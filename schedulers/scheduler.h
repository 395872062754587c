/*
 * scheduler.h - schedulers decide when and where attempts run: `direct`
 * runs them on this host (up to --jobs at once, or as srun steps inside a
 * Slurm allocation), `slurm` submits them to a cluster as batch jobs and
 * job arrays, `gridengine` (alias sge) as Grid Engine array jobs.  One file per scheduler, each exporting one const struct
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
#include "backends/gpu.h"
#include "common/err.h"
#include "common/state.h"
#include "runner/policy/classify.h"

/* What a scheduler reports about one attempt. */
struct vg_sched_update {
	struct vg_attempt	*a;		/* as submitted */
	enum vg_state		 state;		/* new state */
	struct vg_result	 result;	/* filled when terminal */
	char			 handle[64];	/* job id / pid, when new */
	char			 reason[256];	/* pending reason etc. */
	int			 slot;		/* executor slot it runs in,
						   1-based, where the scheduler
						   numbers them (direct: the
						   lowest free when it starts);
						   0 = none */
};

/* Capability bits of a scheduler, read through vg_sched_has(). */
#define VG_SCAP_LOCAL		0x01	/* attempts are processes of the vigil
					   that started them: after its death
					   they are killed unless the backend
					   takes them over (reattach) */
#define VG_SCAP_JOBS		0x02	/* handles are cluster job ids and
					   attempts have a node (status shows
					   them) */
#define VG_SCAP_DEPEND		0x04	/* can hold attempts until jobs of
					   another run end (deps below) */

/*
 * A run that this run waits for (after:), handed to a VG_SCAP_DEPEND
 * scheduler while it is still going: the handles of its attempts not yet
 * ended, all of them submitted by the same scheduler.  Attempts submitted
 * while deps is set wait for those jobs (cond: enum vg_after_cond).
 */
struct vg_sched_dep {
	int			 cond;
	char			*run_id;
	char			**handles;
	size_t			 n;
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
	/* Set by the driver (VG_SCAP_DEPEND only): what attempts submitted
	 * from now on wait for; NULL = nothing. */
	const struct vg_sched_dep	*deps;
	size_t				 ndeps;
};

struct vg_launcher_ops;

struct vg_scheduler_ops {
	/* Name, manifest sections and their validation beyond the schema
	 * (runner/manifest/plugin.h); kind VG_PLUGIN_SCHEDULER. */
	struct vg_plugin p;
	unsigned	 caps;		/* VG_SCAP_* */
	/* Variables of the job that `vigil task-exec` passes on to the
	 * task (which job and task, its CPUs, hosts and GPUs), NULL-
	 * terminated; NULL when none. */
	const char *const *task_env;
	/* How the gate reads the scheduler's own commands (scancel, qdel,
	 * ...), registered with the classifier at start; NULL when none. */
	const struct pl_prog *policy_progs;
	/* How the direct scheduler starts tasks inside one of this
	 * scheduler's allocations (slurm: srun job steps), tried before
	 * the backend's own start (schedulers/launcher.h); NULL when none. */
	const struct vg_launcher_ops *launcher;
	/* `vigil task-exec` in one of this scheduler's jobs: how the
	 * command runs there (slurm: once per Slurm task through srun when
	 * its batch script exported VIGIL_LAUNCHER=srun); NULL: as it is. */
	void	(*task_command)(struct vg_command *cmd);
	/* `vigil task-exec`, the task ended with r: the scheduler's word on
	 * it (slurm: a packed task cancelled by vigil cancel is CANCELLED
	 * however it ended).  NULL: none. */
	void	(*task_ended)(const char *task_dir, struct vg_result *r);
	/* The allocation this process runs in, when it is one of this
	 * scheduler's jobs: 1 and *a filled (its CPUs, memory, GPUs, as the
	 * job's environment says), 0 when not.  The direct scheduler's pool
	 * takes it (backends/gpu.h).  NULL: never. */
	int	(*allocation)(struct vg_alloc *a);

	int	(*open)(struct vg_sched *s, struct vg_err *e);
	/* Takes a (borrowed until its terminal update is returned). */
	int	(*submit)(struct vg_sched *s, struct vg_attempt *a,
		    struct vg_err *e);
	/* Sends what submit collected; optional (direct starts at once). */
	int	(*flush)(struct vg_sched *s, struct vg_err *e);
	/* Fills *ups (scheduler-owned until the next poll) with *n changes. */
	int	(*poll)(struct vg_sched *s, int timeout_ms, int wake_fd,
		    struct vg_sched_update **ups, size_t *n, struct vg_err *e);
	/* Stops a: SIGTERM, then SIGKILL after the attempt's kill_grace;
	 * with force, SIGKILL at once (a second interrupt, a run that
	 * failed).  A cluster's own cancel (scancel, qdel) is final either
	 * way.  An attempt not started yet is dropped and reported
	 * CANCELLED by the next poll.  Never blocks. */
	int	(*cancel)(struct vg_sched *s, struct vg_attempt *a, int force,
		    struct vg_err *e);
	/* Re-adopts an in-flight attempt of a dead vigil by its handle, or
	 * with an empty handle by what the scheduler recorded itself;
	 * VG_ENOENT when it never handed the attempt on.  Optional. */
	int	(*reattach)(struct vg_sched *s, struct vg_attempt *a,
		    const char *handle, struct vg_err *e);
	/* The driver will not run task index again (cancelled while it
	 * waited for a retry): a scheduler keeping a place for its next
	 * attempt (a pack waiting to run it in place) gives it up now.
	 * task_dir is the task's directory.  Optional; never blocks. */
	void	(*drop)(struct vg_sched *s, int index, const char *task_dir);
	/* Number of attempts submitted and not yet reported terminal. */
	size_t	(*active)(struct vg_sched *s);
	void	(*close)(struct vg_sched *s);
	/* Appends "name: ..." lines for `vigil doctor`: what this host
	 * lacks for the scheduler, each with what to change.  Optional. */
	void	(*probe)(struct vg_buf *out);
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
extern const struct vg_scheduler_ops vg_scheduler_gridengine;

/* NULL-terminated table of every compiled-in scheduler. */
extern const struct vg_scheduler_ops *const vg_schedulers[];

/* The scheduler's drop op, when it has one. */
void	vg_sched_drop(struct vg_sched *s, int index, const char *task_dir);

/* Looks a scheduler up by name; NULL when there is none. */
const struct vg_scheduler_ops *vg_scheduler_find(const char *name);

/* Runs ops's probe, when it has one (vigil doctor). */
void	vg_scheduler_probe(const struct vg_scheduler_ops *ops,
	    struct vg_buf *out);

/* Runs ops's cancel_orphans; VG_EUNSUPPORTED when a scheduler whose
 * attempts outlive vigil (not VG_SCAP_LOCAL) lacks it. */
int	vg_scheduler_cancel_orphans(const struct vg_scheduler_ops *ops,
	    const char *run_id, const char *run_dir,
	    const struct vg_sched_orphan *v, size_t n, int whole,
	    struct vg_buf *said, struct vg_err *e);

/*
 * The run's manifest as a job on a node reads it: RUN_DIR/manifest.json,
 * where RUN_DIR is adopted (common/adopt.h: the user's own, writable by
 * no one else, and so is every directory on its way) and the file read
 * beneath it (no link, FIFO, hard link or other owner), with
 * RUN_DIR/origin.json (where the run was made, runner/core/origin.h)
 * read the same way when it exists.  json and origin (either may be
 * NULL) get the texts (origin empty when there is none), hex the
 * SHA-256 of the manifest, followed by a NUL and the origin when there
 * is one.  The submitting vigil passes the digest to the job (`task-exec
 * --manifest-sha256`), which checks it before running anything.
 * Returns 0 or a negative vg_rc.
 */
int	vg_run_manifest_read(const char *run_dir, struct vg_buf *json,
	    struct vg_buf *origin, char hex[65], struct vg_err *e);

/* True when ops has every capability bit of caps. */
int	vg_scheduler_has(const struct vg_scheduler_ops *ops, unsigned caps);

/*
 * Wrappers: the only way generic code calls a scheduler (s->ops set).
 * Each behaves as the operation documented above; the optional ones
 * answer for a scheduler that lacks them: flush does nothing and
 * returns 0, reattach returns VG_EUNSUPPORTED.
 */
int	vg_sched_open(struct vg_sched *s, struct vg_err *e);
int	vg_sched_submit(struct vg_sched *s, struct vg_attempt *a,
	    struct vg_err *e);
int	vg_sched_flush(struct vg_sched *s, struct vg_err *e);
int	vg_sched_poll(struct vg_sched *s, int timeout_ms, int wake_fd,
	    struct vg_sched_update **ups, size_t *n, struct vg_err *e);
int	vg_sched_cancel(struct vg_sched *s, struct vg_attempt *a, int force,
	    struct vg_err *e);
int	vg_sched_reattach(struct vg_sched *s, struct vg_attempt *a,
	    const char *handle, struct vg_err *e);
size_t	vg_sched_active(struct vg_sched *s);
void	vg_sched_close(struct vg_sched *s);

/*
 * Appends b to the job journal "jobs" of a cluster scheduler's directory
 * dir (RUN/slurm, RUN/gridengine) and syncs it.  The file is opened
 * beneath the run's directory without following a link (a task could
 * plant one there), created 0600.  0 or a vg_rc with e set.
 */
int	vg_sched_journal_append(const char *dir, const struct vg_buf *b,
	    struct vg_err *e);

/*
 * Reads the job journal of dir, opened as vg_sched_journal_append opens
 * it (a link, a FIFO or a hard link planted there is refused, never
 * followed), and calls line for each of its lines, NUL-terminated, its
 * '\n' kept when the line has one (the last may be half-written); a
 * line longer than VG_SCHED_JOURNAL_LINE is cut there.  No journal is
 * none.  A non-zero return of line stops the walk and is returned.
 */
#define VG_SCHED_JOURNAL_LINE	1200
int	vg_sched_journal_each(const char *dir,
	    int (*line)(const char *text, void *arg), void *arg,
	    struct vg_err *e);

/* A journal's job line: task index, attempt, the cluster's job and its
 * array index. */
struct vg_sched_jentry {
	int		 index;
	int		 attempt;
	unsigned long	 job;
	long		 task;
};

/*
 * Reads the job lines "INDEX ATTEMPT JOB<sep>TASK" (sep '.' or '_') of dir's journal
 * into *v (caller frees), in journal order; other lines are skipped.
 * No journal is none.  0 or a vg_rc with e set (then *v is NULL).
 */
int	vg_sched_journal_load(const char *dir, char sep,
	    struct vg_sched_jentry **v, size_t *n, struct vg_err *e);

#endif

/*
 * store.h - run state in one sqlite database, $VIGIL_HOME/vigil.db (WAL,
 * busy timeout, schema version with migrations, modes 0700/0600).
 *
 * Tables: runs, tasks, attempts, events (every state change with time and
 * reason) and audit (every policy decision).  Output files live in the run
 * directory ($VIGIL_HOME/runs/<run-id>/tasks/<index>/), never here.
 *
 * Every write is durable when the call returns (synchronous=NORMAL in WAL
 * mode; the driver batches per-poll updates in one transaction with
 * vg_store_begin/commit).  All calls block on the database lock for at
 * most the busy timeout.  A struct vg_store is one connection: never share
 * it across fork(2) or between threads.
 */
#ifndef VG_STORE_H
#define VG_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/home.h"
#include "common/state.h"
#include "runner/policy/policy.h"

struct vg_store;

/* The schema version this vigil writes (PRAGMA user_version). */
#define VG_STORE_SCHEMA	13

/* Run ids: "YYYYMMDD-HHMMSS-xxxxxx" (UTC, 6 random hex digits). */
#define VG_RUN_ID_MAX	32


/*
 * Opens (creating when missing, with mode 0700 for home and 0600 for the
 * file) home/vigil.db and migrates it to VG_STORE_SCHEMA.  A database
 * written by a newer vigil is refused with VG_ESTATE.  *sp is owned by
 * the caller (vg_store_close).
 */
int	vg_store_open(const char *home, struct vg_store **sp, struct vg_err *e);
void	vg_store_close(struct vg_store *s);

/* The home directory the store was opened in; borrowed. */
const char *vg_store_home(const struct vg_store *s);

/* Transactions (BEGIN IMMEDIATE ... COMMIT); not nestable. */
int	vg_store_begin(struct vg_store *s, struct vg_err *e);
int	vg_store_commit(struct vg_store *s, struct vg_err *e);
/* Rolls back an open transaction, if any; never fails loudly. */
void	vg_store_rollback(struct vg_store *s);

/* Makes a new run id into out (VG_RUN_ID_MAX bytes). */
void	vg_run_id_make(char *out);

/* One run, as recorded. */
struct vg_run_info {
	char		 id[VG_RUN_ID_MAX];
	char		*name;		/* manifest name, may be NULL */
	char		*file;		/* manifest path as given */
	char		*scheduler;
	char		*backend;
	char		*dir;		/* run directory */
	enum vg_state	 state;		/* PENDING, RUNNING, or terminal */
	char		*reason;	/* why it ended, may be NULL */
	double		 created;
	double		 ended;		/* 0 while not ended */
	pid_t		 pid;		/* the vigil driving it, 0 when none */
	unsigned long long pid_start;	/* its /proc starttime */
	char		*host;		/* its host name, NULL when not known */
	int		 ntasks;
	/* Where it was made (runner/core/origin.h, JSON); NULL for a run
	 * made before vigil recorded it. */
	char		*origin;
	int		 counts[VG_ST__COUNT];	/* tasks per state (list/get) */
};

/* Frees the strings of r; the struct itself is the caller's. */
void	vg_run_info_release(struct vg_run_info *r);

/*
 * Records a new run r (id, name, file, scheduler, backend, dir, ntasks,
 * created, origin; state PENDING) with the effective manifest JSON.
 */
int	vg_store_run_create(struct vg_store *s, const struct vg_run_info *r,
	    const char *manifest_json, struct vg_err *e);

/*
 * Looks a run up by id, by a unique prefix of an id, or "last" (the
 * newest run).  Fills r (release with vg_run_info_release) with counts.
 * VG_ENOENT when nothing matches, VG_EINVAL when a prefix is ambiguous.
 */
int	vg_store_run_get(struct vg_store *s, const char *id,
	    struct vg_run_info *r, struct vg_err *e);

/* Appends the stored manifest JSON of run id to out. */
int	vg_store_run_manifest(struct vg_store *s, const char *id,
	    struct vg_buf *out, struct vg_err *e);

/*
 * Calls cb for every run, newest first; cb returns non-zero to stop.
 * r is valid only during the call.
 */
int	vg_store_run_list(struct vg_store *s,
	    int (*cb)(void *arg, const struct vg_run_info *r), void *arg,
	    struct vg_err *e);

/* Sets the state of a run (and ended, when terminal) with an event. */
int	vg_store_run_set_state(struct vg_store *s, const char *id,
	    enum vg_state st, const char *reason, struct vg_err *e);

/*
 * Makes (pid, pid_start, host) the run's driver if and only if the
 * recorded one is still (was_pid, was_start): a compare-and-set in one
 * statement, so of two vigils claiming the same run one wins.  *won says
 * which.  Blocks on the database lock.
 */
int	vg_store_run_claim(struct vg_store *s, const char *id, pid_t was_pid,
	    unsigned long long was_start, pid_t pid,
	    unsigned long long pid_start, const char *host, int *won,
	    struct vg_err *e);

/* Records which process drives the run now (pid 0: none). */
int	vg_store_run_set_owner(struct vg_store *s, const char *id, pid_t pid,
	    unsigned long long pid_start, struct vg_err *e);

/* Deletes a run and everything recorded about it (not its directory). */
int	vg_store_run_delete(struct vg_store *s, const char *id,
	    struct vg_err *e);

/* One task of a run, as recorded; fixed size so arrays need no frees. */
struct vg_task_rec {
	int		 index;
	enum vg_state	 state;
	int		 attempts;	/* attempts started so far */
	int		 tries;		/* of those, counted against retry.max */
	int		 exit_code;	/* -1 when none or killed */
	int		 signal;
	double		 started;	/* of the latest attempt; 0 = never */
	double		 ended;
	double		 next_at;	/* earliest start of the next attempt */
	uint64_t	 memory;	/* effective resources (retries scale) */
	uint64_t	 time;
	double		 timeout;
	pid_t		 pid;		/* watched process of the attempt */
	unsigned long long pid_start;
	int		 cancel_req;	/* vigil cancel RUN/TASK asked for it */
	char		 handle[64];	/* pid or job id */
	char		 node[64];
	char		 reason[256];
	char		 gpus[256];	/* GPU ids of the last attempt */
};

/*
 * Adds task t of a run (state, reason, memory, time, timeout are taken
 * from t), with its matrix values as a JSON object and as a short label
 * for tables ("x=1 y=a").
 */
int	vg_store_task_add(struct vg_store *s, const char *run_id,
	    const struct vg_task_rec *t, const char *matrix_json,
	    const char *label, struct vg_err *e);

/* Writes every field of t back (the row must exist). */
int	vg_store_task_put(struct vg_store *s, const char *run_id,
	    const struct vg_task_rec *t, struct vg_err *e);

/*
 * Loads the tasks of a run in index order into *vp (caller frees with
 * free(3)), *np of them.
 */
int	vg_store_tasks_load(struct vg_store *s, const char *run_id,
	    struct vg_task_rec **vp, size_t *np, struct vg_err *e);

/*
 * Calls cb for each task of a run in index order with its record, matrix
 * JSON and label (valid only during the call); index -1 means all,
 * otherwise only that task.  cb returns non-zero to stop.
 */
int	vg_store_task_each(struct vg_store *s, const char *run_id, int index,
	    int (*cb)(void *arg, const struct vg_task_rec *t,
	    const char *matrix_json, const char *label), void *arg,
	    struct vg_err *e);
/* The state of task index of run_id into *state (left alone when the
 * run has no such task). */
int	vg_store_task_state(struct vg_store *s, const char *run_id, int index,
	    enum vg_state *state, struct vg_err *e);

/*
 * Marks tasks for cancellation (index -1: every task not yet ended);
 * the driver reads the marks when signalled.  *n (may be NULL) gets how
 * many tasks were marked.
 */
int	vg_store_task_request_cancel(struct vg_store *s, const char *run_id,
	    int index, int *n, struct vg_err *e);

/* One attempt of a task. */
struct vg_attempt_rec {
	int		 index;
	int		 attempt;	/* 1-based */
	enum vg_state	 state;
	int		 exit_code;
	int		 signal;
	double		 started;
	double		 ended;
	pid_t		 pid;
	unsigned long long pid_start;
	const char	*handle;	/* borrowed; may be NULL */
	const char	*node;
	const char	*reason;
	const char	*gpus;		/* ids given ("0,3"); NULL = none */
	int		 slot;		/* executor slot it ran in, 1-based,
					   where the scheduler numbers them
					   (direct); 0 = not known */
	struct vg_usage	 usage;		/* NULL columns when unknown */
	/* Sizes of the task's stdout and stderr files when its end was
	 * recorded, where its output ends and the next attempt's begins
	 * (they share the files); -1 while it runs, and for attempts
	 * recorded before vigil kept them. */
	long long	 out_end;
	long long	 err_end;
};

/* Inserts or replaces the record of one attempt. */
int	vg_store_attempt_put(struct vg_store *s, const char *run_id,
	    const struct vg_attempt_rec *a, struct vg_err *e);

/*
 * Calls cb for each attempt of one task (index -1: of every task, in
 * index order), oldest first (the strings of a are valid only during
 * the call).
 */
int	vg_store_attempt_each(struct vg_store *s, const char *run_id,
	    int index, int (*cb)(void *arg, const struct vg_attempt_rec *a),
	    void *arg, struct vg_err *e);

/*
 * Records a state change: task -1 means the run itself, attempt 0 none.
 * time is now.
 */
int	vg_store_event(struct vg_store *s, const char *run_id, int task,
	    int attempt, enum vg_state st, const char *reason,
	    struct vg_err *e);

/* One recorded event, for vigil status RUN/TASK and tests. */
struct vg_event_rec {
	double		 time;
	int		 task;
	int		 attempt;
	enum vg_state	 state;
	const char	*reason;
};

/* task for vg_store_event_each: every event of the run (task -1 is the
 * run's own events, the index of a task its events). */
#define VG_STORE_EVENTS_ALL	(-2)

/* Calls cb for the events of a run's task, oldest first. */
int	vg_store_event_each(struct vg_store *s, const char *run_id, int task,
	    int (*cb)(void *arg, const struct vg_event_rec *ev), void *arg,
	    struct vg_err *e);


int	vg_store_audit(struct vg_store *s, const struct vg_audit_rec *rec,
	    struct vg_err *e);

/* Calls cb for the audit records of a run (NULL: all), oldest first
 * (single and packed records merged by time). */
int	vg_store_audit_each(struct vg_store *s, const char *run_id,
	    int (*cb)(void *arg, const struct vg_audit_rec *rec), void *arg,
	    struct vg_err *e);

/* Records n decisions, *recs[i] at times[i] (0: now; the record's own
 * time is not read; a record may be given many times), in one
 * transaction (joins an open one) as packed rows of audit_pack, one per
 * run among them; vg_store_audit_each and vg_store_audit_prune read and
 * prune them with the rows of audit. */
int	vg_store_audit_many(struct vg_store *s,
	    const struct vg_audit_rec *const *recs, const double *times,
	    size_t n, struct vg_err *e);

/* Deletes audit records older than before (epoch seconds); *removed
 * (may be NULL) gets how many. */
int	vg_store_audit_prune(struct vg_store *s, double before,
	    long long *removed, struct vg_err *e);

/*
 * Run groups (runner/core/group.h) and notification claims
 * (runner/core/notify.h), in table run_groups.  vg_store_group_set
 * records run_id's concurrency group and, for a SKIPPED run, the run
 * that held it (holder may be NULL).  vg_store_group_get reads them back
 * (*grp NULL when none is recorded; caller frees).  vg_store_group_open
 * calls cb with each run of group grp still PENDING or RUNNING, newest
 * first; cb returns non-zero to stop.
 */
int	vg_store_group_set(struct vg_store *s, const char *run_id,
	    const char *grp, const char *holder, struct vg_err *e);
int	vg_store_group_get(struct vg_store *s, const char *run_id,
	    char **grp, char **holder, struct vg_err *e);
int	vg_store_group_open(struct vg_store *s, const char *grp,
	    int (*cb)(void *arg, const char *run_id), void *arg,
	    struct vg_err *e);

/*
 * Claims the notification of the latest end of run run_id: *claimed is
 * 1 for the first caller after the run's end was recorded, 0 for every
 * later one (and while the run has not ended).  Durable on return, or
 * with the caller's transaction.
 */
int	vg_store_notify_claim(struct vg_store *s, const char *run_id,
	    int *claimed, struct vg_err *e);

/* ---- sessions (runner/core/session.c; docs/sessions.md) ---- */

/* One session, as recorded; fixed size but for the manifest. */
struct vg_session_rec {
	char		 id[VG_RUN_ID_MAX + 4];	/* "s-" + a run id */
	char		 name[64];		/* "" when none */
	char		 backend[32];
	char		 dir[1024];		/* session directory here */
	char		 state[16];		/* starting, active, closing,
						   stopped, expired, failed */
	char		 reason[256];
	double		 created;
	double		 last_used;		/* end of the last command */
	double		 ended;			/* 0 while open */
	double		 idle_timeout;		/* seconds; 0 = none */
	double		 max_age;		/* seconds; 0 = none */
	char		 mode[24];		/* policy mode */
	char		 policy[1024];		/* --policy FILE, "" = site's */
	char		 handle[256];		/* the backend's */
	char		 root[1024];		/* session dir in the sandbox */
	char		 owner[320];		/* who keeps it (label) */
	int		 jobs;			/* commands started so far */
	char		*manifest;		/* effective JSON (owned when
						   read; put borrows it) */
};

/* Inserts or replaces the record of a session. */
int	vg_store_session_put(struct vg_store *s, const struct vg_session_rec *r,
	    struct vg_err *e);

/*
 * Looks a session up by id, by a unique prefix of an id, or by the name
 * of a session still open.  Fills r (free r->manifest); VG_ENOENT when
 * nothing matches, VG_EINVAL when a prefix is ambiguous.
 */
int	vg_store_session_get(struct vg_store *s, const char *key,
	    struct vg_session_rec *r, struct vg_err *e);

/* Calls cb for every session, newest first (r->manifest is NULL and r
 * valid only during the call); cb returns non-zero to stop. */
int	vg_store_session_list(struct vg_store *s,
	    int (*cb)(void *arg, const struct vg_session_rec *r), void *arg,
	    struct vg_err *e);

/*
 * Moves session id from state from (one of a space-separated list) to
 * state to with reason (may be NULL), setting ended when to is not
 * "active" or "starting"; *won (may be NULL) is 1 when this call made the
 * move, 0 when the session was in another state (someone else moved it).
 */
int	vg_store_session_move(struct vg_store *s, const char *id,
	    const char *from, const char *to, const char *reason, int *won,
	    struct vg_err *e);

/* Sets last_used of session id to t (a command started or ended). */
int	vg_store_session_touch(struct vg_store *s, const char *id, double t,
	    struct vg_err *e);

/* Takes the next job number of session id into *job (1, 2, ...). */
int	vg_store_session_next_job(struct vg_store *s, const char *id,
	    int *job, struct vg_err *e);

/* Deletes the record of session id (not its directory). */
int	vg_store_session_delete(struct vg_store *s, const char *id,
	    struct vg_err *e);

/*
 * Like vg_store_task_each of the whole run, but only its tasks in state
 * `state` (others 0) or in any other state (others 1; with state
 * SUCCEEDED, CACHED is not "other": both are success), at most limit of
 * them (0: all), in index order, through the tasks_state index: the
 * time goes with the tasks read, not with the run's size.
 */
int	vg_store_task_each_state(struct vg_store *s, const char *run_id,
	    enum vg_state state, int others, size_t limit,
	    int (*cb)(void *arg, const struct vg_task_rec *t,
	    const char *matrix_json, const char *label), void *arg,
	    struct vg_err *e);

/* ---- results kept for reuse (runner/core/reuse.h; docs/reuse.md) ---- */

/* One reuse entry: the successful attempt a key names and the files of
 * its task directory ("REL SIZE" lines). */
struct vg_reuse_rec {
	char		 key[40];
	char		 run_id[VG_RUN_ID_MAX];
	int		 index;
	int		 attempt;
	double		 created;
	char		*dir;		/* the task directory (owned when read,
					   borrowed by put) */
	char		*files;		/* "stdout 12\noutputs/a 5\n" */
};

/* Frees the strings of r (read by get or each); the struct stays. */
void	vg_reuse_rec_release(struct vg_reuse_rec *r);

/* Inserts or replaces the entry of r->key.  Joins an open transaction:
 * the driver commits it with the attempt's end, after its files are in
 * place. */
int	vg_store_reuse_put(struct vg_store *s, const struct vg_reuse_rec *r,
	    struct vg_err *e);

/* Looks key up: *found 1 with r filled (release it; strings of an
 * earlier fill are freed first), else 0. */
int	vg_store_reuse_get(struct vg_store *s, const char *key,
	    struct vg_reuse_rec *r, int *found, struct vg_err *e);

/* Calls cb for every entry (run_id NULL: of every run; index -1: of
 * every task), oldest first; r is valid during the call only. */
int	vg_store_reuse_each(struct vg_store *s, const char *run_id, int index,
	    int (*cb)(void *arg, const struct vg_reuse_rec *r), void *arg,
	    struct vg_err *e);

/* Drops the entries of run_id (NULL: all) and task index (-1: all);
 * *n (may be NULL) gets how many. */
int	vg_store_reuse_drop(struct vg_store *s, const char *run_id, int index,
	    long long *n, struct vg_err *e);

/* Appends to out the ids of the runs some entry names (vigil gc keeps
 * them). */
int	vg_store_reuse_runs(struct vg_store *s, struct vg_strv *out,
	    struct vg_err *e);

/* Records text, lines of key descriptions shared by many tasks, under
 * id (its hash) once. */
int	vg_store_reuse_part_put(struct vg_store *s, const char *id,
	    const char *text, struct vg_err *e);

/* Records task index's key, the lines of its description of its own,
 * the id of the shared lines that follow them (vg_store_reuse_part_put;
 * NULL: none) and, for a CACHED task, the attempt it reused
 * ("RUN/TASK/ATTEMPT"; NULL: none). */
int	vg_store_task_key_put(struct vg_store *s, const char *run_id, int index,
	    const char *key, const char *description, const char *parts,
	    const char *reused, struct vg_err *e);

/* Appends what vg_store_task_key_put recorded to the buffers (each may
 * be NULL), the description whole (its shared lines after its own);
 * *found 0 when the task has no key. */
int	vg_store_task_key_get(struct vg_store *s, const char *run_id, int index,
	    struct vg_buf *key, struct vg_buf *description,
	    struct vg_buf *reused, int *found, struct vg_err *e);

/* What gates re-hashing an input file: its stat. */
struct vg_reuse_stat {
	unsigned long long	 dev;
	unsigned long long	 ino;
	long long		 size;
	long long		 mtime_ns;
};

/* The content hash recorded for path at stat want: *found 0 when none
 * or the stat differs. */
int	vg_store_reuse_stat_get(struct vg_store *s, const char *path,
	    const struct vg_reuse_stat *want, char hash[33], int *found,
	    struct vg_err *e);
/* Records path's content hash at stat at. */
int	vg_store_reuse_stat_put(struct vg_store *s, const char *path,
	    const struct vg_reuse_stat *at, const char *hash, struct vg_err *e);

#endif

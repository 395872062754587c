/*
 * run-int.h - what the driver's files share (runner/core/run.c, the
 * drive; run-recover.c, taking over a dead vigil's attempts): the
 * driver's state and the few steps both use.  Internal: only
 * runner/core/run*.c include it.
 */
#ifndef VG_RUN_INT_H
#define VG_RUN_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/dirpool.h"
#include "runner/core/after.h"
#include "runner/core/progress.h"
#include "runner/core/reuse.h"
#include "runner/core/run.h"
#include "runner/core/stream.h"

/*
 * A task as the driver keeps it for the whole drive: its row without the
 * strings, so that a large run costs under 100 bytes a task.  The reason
 * is written afresh with every change; handle, node and GPU ids belong
 * to the latest attempt and live in its box while it is in flight, and
 * are read back from the store by key for a task written without one.
 */
struct trec {
	double			 started, ended, next_at, timeout;
	uint64_t		 memory, time;
	unsigned long long	 pid_start;
	int			 index, attempts, tries, exit_code, signal;
	int			 cancel_req;
	pid_t			 pid;
	enum vg_state		 state;
	int			 dirty;		/* its row waits in
						   drv.dirty[dirty - 1] */
	int			 adirty;	/* its attempt's row, in
						   drv.adirty[adirty - 1] */
};

/* A task row kept until the transaction commits. */
struct task_w {
	size_t			 i;		/* its task */
	struct vg_task_rec	 rec;
};

/* An attempt row kept until the transaction commits, with copies of
 * its strings (the record's pointers are set when it is written). */
struct attempt_w {
	size_t			 i;		/* its task */
	struct vg_attempt_rec	 rec;
	unsigned char		 has;		/* which strings are set */
	char			 handle[64];
	char			 node[64];
	char			 gpus[256];
	char			 reason[256];
};

/* The strings of a task row that belong to its latest attempt, and
 * the slot it runs in (its attempt row holds that, the task row not). */
struct tstrings {
	char	handle[64];
	char	node[64];
	char	gpus[256];
	int	slot;
};

/* One attempt in flight, with the storage its borrowed strings need. */
struct box {
	struct vg_attempt	 a;
	struct vg_task		 task;		/* a.task, built for the
						   attempt (lazy taskset) */
	size_t			 i;		/* its task */
	char			*task_dir;
	char			*scratch_dir;
	struct tstrings		 s;
	int			 reattached;	/* taken over by a resume of
						   the direct scheduler */
	struct vg_stream_writer	*sw;		/* output: stream, or NULL */
	struct vg_stream_src	*out;		/* this attempt's pipes */
};

struct drv {
	struct vg_store			*st;
	const char			*run_id;
	char				*run_dir;
	const struct vg_manifest	*m;
	const struct vg_taskset		*ts;
	struct trec			*tr;
	size_t				 n, ncap;
	struct box			**live;		/* by task index */
	struct vg_sched			 sched;
	int				 sched_open;
	int				 sigfd;
	sigset_t			 oldmask;
	int				 cancelling;
	const char			*cancel_why;
	int				 counts[VG_ST__COUNT];
	size_t				 cursor;	/* first-time tasks */
	int				*retry;		/* waiting for next_at */
	size_t				 nretry, retrycap;
	struct vg_progress		*pg;
	struct vg_buf			 label;
	char				*scratch_base;	/* NULL: none here */
	char				*unprepared;	/* why the backend's
							   prepare failed */
	int				 unprepared_denied; /* host
							   access refused */
	/* The backend's handle for this drive (NULL: it keeps none),
	 * each attempt's a->drive, unprepared after the scheduler's
	 * close has cleaned every attempt up. */
	struct vg_backend_drive		*drive;
	/* after: first attempts wait while gated (after_gate). */
	int				 after_gated;
	double				 after_next;	/* next check */
	char				 after_said[256]; /* the reason the
							   waiting tasks hold */
	double				 created;	/* of the run */
	struct vg_after_state		 after;
	const struct vg_backend_ops	*backend;	/* or NULL */
	struct vg_stream_writer		*sw;		/* output: stream */
	/* Group commit: the transaction steps share (txn_open). */
	int				 txn;		/* one is open */
	int				 txn_now;	/* commit at step end */
	long long			 txn_t0;	/* its begin, mono ms */
	int				 group_ms;	/* 0: one per step */
	unsigned long			 ncommits;	/* of this drive */
	/* Task rows changed in the open transaction, written once each
	 * just before it commits (a task often moves QUEUED, RUNNING and
	 * to its end within one). */
	struct task_w			*dirty;
	size_t				 ndirty, dirtycap;
	struct attempt_w		*adirty;	/* likewise attempts */
	size_t				 nadirty, adirtycap;
	/* Task directories made here: RUN/tasks (tasks_fd, -1 until the
	 * first, or when it cannot be opened) and empty ones kept in
	 * RUN/tmp for the next tasks (common/dirpool.h). */
	int				 tasks_fd;
	struct vg_dirpool		 dirs;
	struct vg_reuse			*reuse;		/* reuse: true, else
							   NULL */
};

/* The strings of task i's row that belong to its latest attempt, read
 * back from the store (a task written without them). */
int	vg_drv_task_strings(struct drv *d, size_t i, struct tstrings *s,
	    struct vg_err *e);
/* Task i's state, attempt and reason, written before the commit. */
int	vg_drv_set_task(struct drv *d, size_t i, enum vg_state st,
	    int attempt, const char *reason, struct vg_err *e);
/* The row of attempt of task t, written before the commit. */
int	vg_drv_put_attempt(struct drv *d, const struct trec *t,
	    const struct tstrings *s, int attempt, enum vg_state st, int seen,
	    const struct vg_result *r, double ended, const char *reason,
	    struct vg_err *e);
/* Task i waits for its next_at (a retry's backoff). */
void	vg_drv_retry_add(struct drv *d, size_t i);
/* An attempt box: filled for attempt of task i, freed. */
void	vg_drv_box_fill(struct drv *d, size_t i, struct box *b, int attempt);
void	vg_drv_box_free(struct box *b);
/* Gives the signals the driver reads back to the process. */
void	vg_drv_signals_off(struct drv *d);
/* The run's state from its tasks' (all terminal). */
enum vg_state vg_drv_final_state(const struct drv *d);

/*
 * Takes over attempts a dead vigil left QUEUED or RUNNING: reattach when
 * the scheduler can, else kill what is left and run the task again
 * (run-recover.c).  had_owner: a driver held the run.
 */
int	vg_drv_recover(struct drv *d, int had_owner, struct vg_err *e);

#endif

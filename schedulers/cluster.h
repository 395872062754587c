/*
 * cluster.h - what the cluster schedulers (slurm*.c, gridengine*.c)
 * share, named for none of them: running one of the cluster's commands
 * with a deadline, array specs ("0-3,7"), setting an earlier attempt's
 * record aside, merging a record with the scheduler's verdict and usage,
 * an adaptive poll interval, and the intent lines of a job journal.
 */
#ifndef VG_CLUSTER_H
#define VG_CLUSTER_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/state.h"

/*
 * Runs argv (no shell, PATH searched), capturing stdout into out and
 * stderr into err (either may be NULL; both bounded at 64 MiB), with a
 * deadline.  Returns 0 when it exited 0; otherwise VG_EBACKEND, or
 * VG_EAGAIN for a time-out or a message transient (may be NULL) calls
 * passing, with the command's first line of stderr in e (of stdout when
 * stderr was silent: Grid Engine's qdel says why there).  Blocks up to
 * timeout_ms.
 */
int	vg_cluster_cmd(const char *const *argv, struct vg_buf *out,
	    struct vg_buf *err, int timeout_ms,
	    int (*transient)(const char *msg), struct vg_err *e);

/* Array spec of sorted, distinct indexes minus offset: "0-3,7,9-10". */
void	vg_cluster_array_spec(const int *idx, size_t n, int offset,
	    struct vg_buf *out);
/* The other way: *out (caller frees) gets the indexes of spec plus
 * offset, in order, *n of them; 0, or -1 for a malformed spec (or one of
 * more than a million). */
int	vg_cluster_parse_spec(const char *spec, int offset, int **out,
	    size_t *n);

/* Moves task_dir/name of an earlier attempt aside as name.ATTEMPT (or
 * removes it), so that it cannot be taken for the next attempt's. */
void	vg_cluster_set_aside(const char *task_dir, const char *name,
	    int attempt);

/*
 * Combines a result record (ground truth for how the task itself ended)
 * with the scheduler's verdict: a task killed by a signal while it says
 * TIMEOUT, OUT_OF_MEMORY, PREEMPTED, NODE_FAIL, DEADLINE or CANCELLED
 * takes its state; otherwise the record wins.  res may be NULL.
 */
void	vg_cluster_merge(struct vg_result *rec, const struct vg_result *sched);

/* Completes a record's usage with the scheduler's (sacct, qacct): what
 * the job was given (Slurm's AllocCPUS, AllocTRES, ReqMem) replaces the
 * record's; CPU time and peak memory fill in what the record lacks. */
void	vg_cluster_merge_usage(struct vg_usage *rec,
	    const struct vg_usage *sched);

/* Adaptive poll interval: fast after a change, growing to a cap. */
struct vg_cluster_pacer {
	double	min;		/* seconds */
	double	max;
	double	cur;
	double	factor;		/* growth per unchanged poll */
};

void	vg_cluster_pacer_init(struct vg_cluster_pacer *p, double min, double max);
/* Next interval after a poll that saw changed (1) or nothing new (0). */
double	vg_cluster_pacer_next(struct vg_cluster_pacer *p, int changed);

/*
 * Appends the start of a job script's last line, `exec VIGIL task-exec
 * [--manifest-sha256 SHA] RUN_DIR` (each value quoted for sh by
 * vg_buf_shquote); the caller adds the task index and the newline.
 * Shared by the job scripts of slurm and gridengine.
 */
void	vg_task_exec_line(struct vg_buf *b, const char *vigil,
	    const char *sha256, const char *run_dir);
/* The same for another hidden command of vigil (pack-exec). */
void	vg_exec_line(struct vg_buf *b, const char *vigil, const char *cmd,
	    const char *sha256, const char *run_dir);

/*
 * One "intent NAME ATTEMPT OFFSET SPEC" line of a job journal
 * (vg_sched_journal_*): a chunk script NAME ("submit-SEQ.sh") given to
 * the scheduler before its job id was journaled, whose elements run the
 * task indexes idx (nidx of them; element k runs idx[k] - offset).
 */
struct vg_cluster_intent {
	char	 name[64];
	int	 attempt;
	int	 offset;
	int	 seq;		/* SEQ of submit-SEQ.sh */
	int	*idx;		/* caller frees */
	size_t	 nidx;
};

/* Parses line into *it: 1 for a well-formed intent of a submit-SEQ.sh
 * script with at least one index (it->idx then the caller's to free), 0
 * for anything else (it->idx NULL). */
int	vg_cluster_intent_parse(const char *line, struct vg_cluster_intent *it);

#endif

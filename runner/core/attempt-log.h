/*
 * attempt-log.h - telling a task's attempts apart in its output.  The
 * attempts of a task append to the same stdout and stderr files; each
 * attempt row keeps the files' sizes when its end was recorded
 * (out_end, err_end), so the output can be cut back into attempts and
 * each part shown under a header line:
 *
 *   --- attempt 2 of 3, started 2026-12-05 18:01:02, exit 1 ---
 *
 * Used by vigil logs, the cron summary and the webhook's stderr_tail
 * (notify.c) and the report's failures (report.c).  With `output:
 * stream` the frames say their attempt themselves, and the headers go
 * where the attempt changes.  A task with one attempt, and attempts
 * recorded before the sizes were kept, get no headers: their output
 * reads as before.
 */
#ifndef VG_ATTEMPT_LOG_H
#define VG_ATTEMPT_LOG_H

#include "common/buf.h"
#include "common/err.h"
#include "common/state.h"
#include "runner/core/store.h"

/* What a header says of one attempt, and where its output ends. */
struct vg_attempt_mark {
	int		 attempt;
	double		 started;
	double		 ended;		/* 0 while it runs */
	enum vg_state	 state;
	int		 exit_code;
	int		 signal;
	char		 reason[160];
	long long	 end[2];	/* out_end, err_end */
};

/* A task's attempts, oldest first. */
struct vg_attempt_marks {
	struct vg_attempt_mark	*v;
	size_t			 n;
	size_t			 cap;
};

#define VG_ATTEMPT_MARKS_INIT	{ NULL, 0, 0 }

/* Frees the contents of m. */
void	vg_attempt_marks_release(struct vg_attempt_marks *m);

/* Fills m (emptied first) with the attempts of task index of run_id.
 * Returns 0 or a negative vg_rc. */
int	vg_attempt_marks_load(struct vg_store *st, const char *run_id,
	    int index, struct vg_attempt_marks *m, struct vg_err *e);

/* Appends the header line of attempt k of m, with its newline. */
void	vg_attempt_header(const struct vg_attempt_marks *m, size_t k,
	    struct vg_buf *out);

/*
 * Whether the output of the attempts in m can be cut at attempt ends for
 * stream (enum vg_stream_kind): more than one attempt, each but the last
 * with its end recorded.
 */
int	vg_attempt_marks_split(const struct vg_attempt_marks *m, int stream);

/*
 * Where attempt k's part of a file of size bytes starts and stops (the
 * last attempt's runs to the end; an end that does not fit gives an
 * empty part, its output then shows under the next attempt).
 */
void	vg_attempt_bounds(const struct vg_attempt_marks *m, int stream,
	    size_t k, long long size, long long *start, long long *stop);

/*
 * Appends the last max bytes of task index's stream (enum
 * vg_stream_kind) in run_dir to out, with the header of each attempt
 * before its part when m splits them, or at each change of attempt in
 * the frames of an output: stream run (the header of the attempt the
 * bytes start in included); the plain vg_task_output_tail otherwise.
 * *cut 1 when there was more before.  Returns 0 or a negative vg_rc.
 */
int	vg_attempt_output_tail(const char *run_dir, int index, int stream,
	    const struct vg_attempt_marks *m, size_t max, struct vg_buf *out,
	    int *cut, struct vg_err *e);

#endif

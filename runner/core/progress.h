/*
 * progress.h - what a foreground run shows while it works.
 *
 * On a terminal: one status line redrawn in place (a bar, counts per
 * state, the running tasks, elapsed time and an ETA), with a log line
 * above it for every task that ends badly.  Otherwise: one plain log line
 * per state change, for log files and CI.  Writes to a file descriptor
 * with write(2) only; never reads.
 */
#ifndef VG_PROGRESS_H
#define VG_PROGRESS_H

#include <stddef.h>

#include "common/state.h"

enum vg_progress_mode {
	VG_PROGRESS_AUTO = 0,	/* BAR when fd is a terminal, else LINES */
	VG_PROGRESS_BAR,
	VG_PROGRESS_LINES,
	VG_PROGRESS_QUIET,
};

struct vg_progress;

/*
 * Creates a display for run_id of total tasks on fd; counts (borrowed,
 * VG_ST__COUNT entries, may be NULL until vg_progress_bind) is kept
 * current by the caller.  Caller frees with vg_progress_free.
 */
struct vg_progress *vg_progress_new(int fd, enum vg_progress_mode mode,
	    const char *run_id, size_t total, const int *counts);
void	vg_progress_free(struct vg_progress *p);

/* Points the display at the counts the driver keeps current. */
void	vg_progress_bind(struct vg_progress *p, const int *counts,
	    size_t total);

/* The mode in effect (AUTO resolved). */
enum vg_progress_mode vg_progress_mode(const struct vg_progress *p);

/*
 * Reports that task index (label borrowed) entered state st in attempt;
 * code/sig/reason describe a terminal state (reason may be NULL).
 */
void	vg_progress_task(struct vg_progress *p, int index, const char *label,
	    enum vg_state st, int attempt, int code, int sig,
	    const char *reason);

/* Prints a free-form line (above the bar on a terminal). */
void	vg_progress_note(struct vg_progress *p, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Redraws the bar when due; returns ms until the next redraw or -1. */
int	vg_progress_tick(struct vg_progress *p);

/* Final line: clears the bar and prints the totals. */
void	vg_progress_done(struct vg_progress *p, enum vg_state run_state);

/*
 * Holds what is reported from now on: task lines and notes are kept, in
 * order, instead of written, and the bar is not redrawn, until
 * vg_progress_release.  The driver holds while a transaction is open, so
 * that nothing is shown before the commit that records it.
 */
void	vg_progress_hold(struct vg_progress *p);

/* Ends a hold: writes the lines kept (print) or drops them (0: their
 * transaction was rolled back). */
void	vg_progress_release(struct vg_progress *p, int print);

#endif

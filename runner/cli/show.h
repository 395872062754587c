/*
 * show.h - how the run-related commands show runs (show.c): times, ages,
 * the displayed state, and the JSON status of a run.
 */
#ifndef VG_SHOW_H
#define VG_SHOW_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "runner/core/store.h"

/* Appends the JSON status of one run with its tasks to out. */
int	vg_status_run_json(struct vg_store *st, const char *id,
	    struct vg_buf *out, struct vg_err *e);

/* The reuse key of task index of run, what went into it and the attempt
 * it reused: as a "reuse" member (null when it has none) written with w,
 * or, with w NULL, as lines appended to out (nothing when none). */
int	vg_show_reuse(struct vg_store *st, const char *run, int index,
	    struct vg_json_writer *w, struct vg_buf *out, struct vg_err *e);

/* The state to show for a run: INTERRUPTED when it is recorded RUNNING
 * but the vigil driving it is gone. */
const char *vg_run_display_state(const struct vg_run_info *r);

/* Formats a wall-clock time as "2026-11-30 01:22:33" (local time) or, with
 * iso, "2026-11-30T01:22:33Z"; "-" for 0.  buf needs 32 bytes. */
const char *vg_fmt_time(double t, int iso, char *buf);

/* Formats an age in seconds as "3d", "5h", "12m" or "40s" into buf. */
const char *vg_fmt_age(double secs, char *buf, size_t len);

#endif

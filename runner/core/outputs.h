/*
 * outputs.h - collecting a task's `outputs:` after each attempt (see
 * outputs.c and docs/manifest.md).
 */
#ifndef VG_OUTPUTS_H
#define VG_OUTPUTS_H

#include "common/buf.h"
#include "common/err.h"
#include "common/state.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/task.h"

/*
 * Copies (or moves) what o's globs match in scratch_dir (may be NULL),
 * then in task_dir, into o's destination for task t of the run in
 * run_dir, when o->when allows for an attempt that ended in st; writes
 * task_dir/outputs.json (attempt, state, dest, files with their sizes,
 * what was skipped and why, bytes, error).  Returns 0, or the error
 * that stopped the collection (the record says it too).
 */
int	vg_outputs_collect(const struct vg_outputs *o,
	    const struct vg_task *t, const char *run_dir, const char *task_dir,
	    const char *scratch_dir, int attempt, enum vg_state st,
	    struct vg_err *e);

/*
 * What follows an attempt of task t (of run run_id) that ended in st,
 * wherever it ran (the driver, task-exec on a Slurm node): nothing when
 * o has no paths or the attempt was lost or denied, else
 * vg_outputs_collect; a failure is warned and recorded in outputs.json
 * and leaves the attempt's outcome alone.
 */
void	vg_outputs_after(const struct vg_outputs *o,
	    const struct vg_task *t, const char *run_id, const char *run_dir,
	    const char *task_dir, const char *scratch_dir, int attempt,
	    enum vg_state st);

/* Reads task_dir/outputs.json into out; VG_ENOENT when there is none. */
int	vg_outputs_read(const char *task_dir, struct vg_buf *out);

/* True when text is an outputs record (an object with "files"). */
int	vg_outputs_valid(const char *text, size_t len);

#endif

/*
 * task.h - tasks: one manifest expanded over its matrix.
 *
 * Expansion (expand.c) is pure: it takes a validated manifest and yields
 * tasks whose command has every ${{ ... }} substituted (values shell-quoted
 * inside string commands, verbatim inside argv elements) and whose env has
 * VIGIL_MATRIX_<NAME> for each axis.  The per-launch variables
 * VIGIL_RUN_ID, VIGIL_TASK_INDEX and VIGIL_TASK_DIR are added by the
 * launcher (vg_attempt_env in backend.c), since they depend on the run.
 */
#ifndef VG_TASK_H
#define VG_TASK_H

#include "manifest.h"

struct vg_task {
	int			index;		/* 0-based, stable across resume */
	struct vg_kvs		matrix;		/* axis name -> value */
	struct vg_command	command;	/* substituted */
	struct vg_kvs		env;		/* manifest env + VIGIL_MATRIX_* */
};

struct vg_taskset {
	struct vg_task	*v;
	size_t		 n;
};

/*
 * Expands m into tasks.  Problems (an undefined ${{ name }}, an include
 * naming no axis) are added to diag with their manifest location and the
 * call returns VG_EINVAL; nothing is returned half-built.  The run id is
 * not needed: ${{ task.index }} is known here, run ids are added later.
 */
int	vg_expand(const struct vg_manifest *m, struct vg_taskset *out,
	    struct vg_diag *diag, struct vg_err *e);
void	vg_taskset_release(struct vg_taskset *ts);
void	vg_task_release(struct vg_task *t);

/* Number of tasks m expands to, without building them (for limits). */
size_t	vg_expand_count(const struct vg_manifest *m);

#endif

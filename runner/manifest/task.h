/*
 * task.h - tasks: one manifest expanded over its matrix.
 *
 * Expansion (expand.c) is pure: it takes a validated manifest and yields
 * tasks whose command has every ${{ ... }} substituted (values shell-quoted
 * inside string commands, verbatim inside argv elements) and whose env has
 * VIGIL_MATRIX_<NAME> for each axis.  The per-launch variables
 * VIGIL_RUN_ID, VIGIL_TASK_INDEX and VIGIL_TASK_DIR are added by the
 * launcher (vg_task_env in backends/task-env.c), since they depend on
 * the run.  Each task carries its own resources: the manifest's, with
 * any ${{ matrix.NAME }} in them decoded for that task, so one sweep may
 * mix tasks of 1, 2 and 4 CPUs.
 */
#ifndef VG_TASK_H
#define VG_TASK_H

#include "runner/manifest/manifest.h"

struct vg_task {
	int			index;		/* 0-based, stable across resume */
	struct vg_kvs		matrix;		/* axis name -> value */
	struct vg_command	command;	/* substituted */
	struct vg_kvs		env;		/* manifest env + VIGIL_MATRIX_* */
	struct vg_resources	resources;	/* the manifest's, with this
						   task's ${{ matrix.NAME }}
						   values decoded; owned */
};

struct vg_task_src;

/*
 * The tasks of a manifest: built all at once (vg_expand: v holds n
 * tasks), or one at a time by index (vg_expand_lazy: v is NULL and src,
 * private to expand.c, holds what builds them).  Read either with
 * vg_taskset_at.
 */
struct vg_taskset {
	struct vg_task		*v;
	size_t			 n;
	struct vg_task_src	*src;
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

/*
 * Like vg_expand, with the same checks and diagnostics (every task is
 * built once and released), but keeps no task: out->n tasks are built
 * again by index with vg_taskset_at.  Memory: 4 bytes a task when the
 * matrix has include or exclude entries, nothing per task otherwise.
 * m must outlive out.
 */
int	vg_expand_lazy(const struct vg_manifest *m, struct vg_taskset *out,
	    struct vg_diag *diag, struct vg_err *e);

/*
 * Task i (< ts->n) of ts: a borrowed pointer into ts->v of an eager set,
 * or tmp, built afresh, for a lazy one (time independent of i).  The
 * caller releases tmp (vg_task_release; harmless when unused) and must
 * zero it before the first call.  Not for concurrent use of one set.
 */
const struct vg_task *vg_taskset_at(const struct vg_taskset *ts, size_t i,
	    struct vg_task *tmp);

/* Number of tasks m expands to, without building them (for limits). */
size_t	vg_expand_count(const struct vg_manifest *m);

/*
 * Streams the tasks of m in order without holding them all: fn gets each
 * task, may take over its contents (then it must zero them), and the task
 * is released when fn returns.  A non-zero return of fn stops the walk
 * and is returned.  Errors as for vg_expand.
 */
typedef int (*vg_task_fn)(struct vg_task *t, void *arg);
int	vg_expand_each(const struct vg_manifest *m, vg_task_fn fn, void *arg,
	    struct vg_diag *diag, struct vg_err *e);

/*
 * Builds only task index of m (resume, task-exec on a compute node), in
 * time linear in the index and constant memory.  VG_ENOENT when m has
 * fewer tasks.  The caller releases *t.
 */
int	vg_expand_task(const struct vg_manifest *m, size_t index,
	    struct vg_task *t, struct vg_diag *diag, struct vg_err *e);

/*
 * Calls fn with the resources of each task of m in order, without
 * building the tasks (for checks over a whole run: what the biggest
 * task asks, whether any asks for GPUs).  When no resources value of m
 * is a template, calls fn once with index -1 and m->resources: every
 * task asks the same.  A value that does not decode is skipped
 * (vg_manifest_load refused it already).  A non-zero return of fn stops
 * the walk and is returned.
 */
typedef int (*vg_res_fn)(long index, const struct vg_resources *r,
    void *arg);
int	vg_expand_resources(const struct vg_manifest *m, vg_res_fn fn,
	    void *arg);

/* The most any task of m asks: cpus, gpus, memory and time are the
 * maxima over the tasks; the other fields are left zero (NULL). */
void	vg_expand_peak(const struct vg_manifest *m, struct vg_resources *peak);

#endif

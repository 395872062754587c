/*
 * after.c - the driver's view of after: (after.h): finds the runs waited
 * for in the store, and says whether the run may start, must wait, can
 * hand its waiting to the scheduler, or can never start.
 *
 * A run waited for is judged by its recorded state: ok needs SUCCEEDED,
 * notok any other terminal state, any any terminal state.  While it is
 * still going, a scheduler with VG_SCAP_DEPEND may hold the attempts
 * itself when that gives the same answer: the run waited for is on the
 * same scheduler, has no retries (its jobs' ends are its tasks' ends),
 * every task not yet ended has been submitted (has a handle), none has
 * failed already (for ok), and the condition is ok or any.  Otherwise
 * vigil waits itself, with the run's tasks PENDING.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/core/after.h"
#include "common/str.h"
#include "runner/manifest/after.h"

/* Finds the newest run named name created before `before`. */
struct by_name {
	const char	*name;
	double		 before;
	char		*id;
};

static int
by_name_cb(void *arg, const struct vg_run_info *r)
{
	struct by_name *b = arg;

	if (r->name == NULL || strcmp(r->name, b->name) != 0 ||
	    (b->before > 0 && r->created >= b->before))
		return 0;
	b->id = vg_xstrdup(r->id);
	return 1;
}

int
vg_after_resolve(struct vg_store *st, const char *ref, double before,
    char id[VG_RUN_ID_MAX], struct vg_err *e)
{
	struct vg_run_info ri;
	struct vg_err ge;
	struct by_name b = { ref, before, NULL };
	int rc;

	vg_err_init(&ge);
	memset(&ri, 0, sizeof(ri));
	if (vg_store_run_get(st, ref, &ri, &ge) == 0 &&
	    strcmp(ri.id, ref) == 0) {
		vg_strlcpy(id, ri.id, VG_RUN_ID_MAX);
		vg_run_info_release(&ri);
		return 0;
	}
	vg_run_info_release(&ri);
	if ((rc = vg_store_run_list(st, by_name_cb, &b, e)) != 0)
		return rc;
	if (b.id == NULL)
		return vg_err_set(e, VG_ENOENT, "after: no run has the id or "
		    "name '%s'", ref);
	vg_strlcpy(id, b.id, VG_RUN_ID_MAX);
	free(b.id);
	return 0;
}

void
vg_after_release(struct vg_after_state *s)
{
	size_t i, k;

	for (i = 0; i < s->ndeps; i++) {
		for (k = 0; k < s->deps[i].n; k++)
			free(s->deps[i].handles[k]);
		free(s->deps[i].handles);
		free(s->deps[i].run_id);
	}
	free(s->deps);
	memset(s, 0, sizeof(*s));
}

/* Whether a run that ended in state st meets cond. */
static int
met(int cond, enum vg_state st)
{
	switch (cond) {
	case VG_AFTER_ANY:
		return 1;
	case VG_AFTER_NOTOK:
		return !vg_state_ok(st);
	default:
		return vg_state_ok(st);
	}
}

/*
 * Whether the scheduler can wait for running run ri (waited for with
 * cond) itself: fills dep with the handles of its unfinished tasks and
 * returns 1, or 0 (vigil waits), or -1 when a task already ended so that
 * ok can never be met (its run has no retries).
 */
static int
handoff(struct vg_store *st, const struct vg_run_info *ri, int cond,
    const struct vg_scheduler_ops *ops, struct vg_sched_dep *dep,
    struct vg_err *e)
{
	struct vg_manifest *dm = NULL;
	struct vg_task_rec *tv = NULL;
	struct vg_buf mj = VG_BUF_INIT;
	struct vg_err je;
	size_t n = 0, i, hcap = 0;
	int ok = 0;

	if (ops == NULL || !vg_scheduler_has(ops, VG_SCAP_DEPEND) ||
	    cond == VG_AFTER_NOTOK || ri->scheduler == NULL ||
	    strcmp(ri->scheduler, ops->p.name) != 0)
		return 0;
	vg_err_init(&je);
	if (vg_store_run_manifest(st, ri->id, &mj, e) != 0 ||
	    vg_manifest_from_json(vg_buf_str(&mj), mj.len, &dm, &je) != 0 ||
	    dm->retry.max > 0)
		goto out;
	if (vg_store_tasks_load(st, ri->id, &tv, &n, e) != 0)
		goto out;
	ok = 1;
	for (i = 0; i < n && ok == 1; i++) {
		if (vg_state_terminal(tv[i].state)) {
			if (cond == VG_AFTER_OK &&
			    !vg_state_ok(tv[i].state))
				ok = -1;
			continue;
		}
		if (tv[i].state == VG_ST_PENDING || tv[i].handle[0] == '\0')
			ok = 0;
	}
	for (i = 0; i < n && ok == 1; i++)
		if (!vg_state_terminal(tv[i].state)) {
			dep->handles = vg_xgrow(dep->handles, &hcap,
			    dep->n + 1, sizeof(*dep->handles));
			dep->handles[dep->n++] = vg_xstrdup(tv[i].handle);
		}
out:
	vg_manifest_free(dm);
	vg_buf_release(&mj);
	free(tv);
	return ok;
}

int
vg_after_check(struct vg_store *st, const struct vg_manifest *m,
    double created, const struct vg_scheduler_ops *ops,
    struct vg_after_state *out, struct vg_err *e)
{
	const struct vg_after *a;
	struct vg_run_info ri;
	struct vg_sched_dep dep;
	char id[VG_RUN_ID_MAX];
	size_t i, cap = 0;
	int rc = 0, h, waiting = 0, never = 0;

	vg_after_release(out);
	for (i = 0; i < m->after.n && !never; i++) {
		a = &m->after.v[i];
		if ((rc = vg_after_resolve(st, a->run, created, id, e)) != 0)
			break;
		memset(&ri, 0, sizeof(ri));
		if ((rc = vg_store_run_get(st, id, &ri, e)) != 0)
			break;
		if (vg_state_terminal(ri.state)) {
			if (!met(a->cond, ri.state)) {
				never = 1;
				snprintf(out->why, sizeof(out->why), "run %s "
				    "(%s) ended %s; after %s can never be met",
				    ri.id, a->run, vg_state_name(ri.state),
				    vg_after_cond_names[a->cond]);
			}
			vg_run_info_release(&ri);
			continue;
		}
		memset(&dep, 0, sizeof(dep));
		h = handoff(st, &ri, a->cond, ops, &dep, e);
		if (h < 0) {
			never = 1;
			snprintf(out->why, sizeof(out->why), "run %s (%s) has "
			    "a task that failed and no retries; after ok can "
			    "never be met", ri.id, a->run);
		} else if (h > 0) {
			dep.cond = a->cond;
			dep.run_id = vg_xstrdup(ri.id);
			out->deps = vg_xgrow(out->deps, &cap, out->ndeps + 1,
			    sizeof(*out->deps));
			out->deps[out->ndeps++] = dep;
			dep.handles = NULL;
		} else if (!waiting) {
			waiting = 1;
			snprintf(out->why, sizeof(out->why), "waiting for run "
			    "%s (%s) to end (after %s); it is %s", ri.id,
			    a->run, vg_after_cond_names[a->cond],
			    vg_state_name(ri.state));
		}
		for (h = 0; (size_t)h < dep.n && dep.handles != NULL; h++)
			free(dep.handles[h]);
		free(dep.handles);
		vg_run_info_release(&ri);
	}
	if (rc != 0)
		return rc;
	out->verdict = never ? VG_AFTER_NEVER : waiting ? VG_AFTER_WAIT :
	    out->ndeps > 0 ? VG_AFTER_HANDOFF : VG_AFTER_OPEN;
	if (out->verdict == VG_AFTER_HANDOFF)
		snprintf(out->why, sizeof(out->why), "held by the scheduler "
		    "until %zu run(s) it waits for end", out->ndeps);
	return 0;
}

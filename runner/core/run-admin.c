/*
 * run-admin.c - what is done to runs outside a drive: creating a run
 * (its tasks recorded, nothing started), claiming one for a driver,
 * telling whether its driver lives, resetting failed tasks for a retry,
 * reaping what a dead driver's attempts left, and cancelling the tasks of
 * a run no vigil drives; the labels and JSON of a task's matrix values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"
#include "runner/core/after.h"
#include "runner/core/leftover.h"
#include "runner/core/run.h"

void
vg_task_label(const struct vg_task *t, struct vg_buf *b)
{
	size_t i;

	if (t->matrix.n == 0) {
		vg_buf_addc(b, '-');
		return;
	}
	for (i = 0; i < t->matrix.n; i++)
		vg_buf_printf(b, "%s%s=%s", i > 0 ? " " : "",
		    t->matrix.v[i].key, t->matrix.v[i].value);
}

void
vg_task_matrix_json(const struct vg_task *t, struct vg_buf *b)
{
	struct vg_json_writer w;
	size_t i;

	vg_json_writer_init(&w, b);
	vg_json_obj_begin(&w);
	for (i = 0; i < t->matrix.n; i++) {
		vg_json_key(&w, t->matrix.v[i].key);
		vg_json_str(&w, t->matrix.v[i].value);
	}
	vg_json_obj_end(&w);
}

int
vg_run_owner_elsewhere(const struct vg_run_info *r)
{
	return r->pid > 0 && r->host != NULL && r->host[0] != '\0' &&
	    strcmp(r->host, vg_self_host()) != 0;
}

int
vg_run_owner_alive(const struct vg_run_info *r)
{
	if (r->pid <= 0)
		return 0;
	/* A driver on another host cannot be looked at from here: it is
	 * taken as alive (a pid of ours would say nothing about it). */
	if (vg_run_owner_elsewhere(r))
		return 1;
	return vg_pid_is(r->pid, r->pid_start);
}

/* Fills e with "run X is being driven by vigil process N on host H". */
static int
driven_by(const struct vg_run_info *r, struct vg_err *e)
{
	return vg_err_set(e, VG_EAGAIN, "run '%s' is being driven by vigil "
	    "process %ld on host '%s'; 'vigil status %s' follows it, 'vigil "
	    "cancel %s' stops it", r->id, (long)r->pid, r->host != NULL &&
	    r->host[0] != '\0' ? r->host : vg_self_host(), r->id, r->id);
}

int
vg_run_claim(struct vg_store *st, struct vg_run_info *r, struct vg_err *e)
{
	unsigned long long self_start = 0;
	int rc, won;

	if (r->pid == vg_self_pid() && !vg_run_owner_elsewhere(r))
		return 0;	/* ours already (a submitted run's vigil) */
	if (vg_run_owner_alive(r))
		return driven_by(r, e);
	(void)vg_pid_start_time(vg_self_pid(), &self_start);
	if ((rc = vg_store_run_claim(st, r->id, r->pid, r->pid_start,
	    vg_self_pid(), self_start, vg_self_host(), &won, e)) != 0)
		return rc;
	if (!won) {
		/* Another vigil claimed it between our look and our claim:
		 * name it. */
		char id[VG_RUN_ID_MAX];

		memcpy(id, r->id, sizeof(id));
		vg_run_info_release(r);
		if ((rc = vg_store_run_get(st, id, r, e)) != 0)
			return rc;
		return driven_by(r, e);
	}
	r->pid = vg_self_pid();
	r->pid_start = self_start;
	free(r->host);
	r->host = vg_xstrdup(vg_self_host());
	return 0;
}

int
vg_run_exit_status(const struct vg_run_result *r)
{
	switch (r->state) {
	case VG_ST_SUCCEEDED:
		return 0;
	case VG_ST_CANCELLED:
		return 5;
	case VG_ST_DENIED:
		return 3;
	default:
		return 1;
	}
}

int
vg_run_create(struct vg_store *st, const struct vg_run_plan *p, char **dirp,
    struct vg_err *e)
{
	struct vg_run_info ri;
	struct vg_task_rec tr;
	struct vg_buf mj = VG_BUF_INIT, lb = VG_BUF_INIT;
	struct vg_task tmp = { 0 };
	const struct vg_task *t;
	char *runs, *dir, *path, *tasks;
	const struct vg_manifest *m = p->m;
	size_t i;
	int rc;

	*dirp = NULL;
	/* Every run waited for must exist now (after.c). */
	for (i = 0; i < m->after.n; i++) {
		char aid[VG_RUN_ID_MAX];

		if ((rc = vg_after_resolve(st, m->after.v[i].run, 0, aid,
		    e)) != 0)
			return rc == VG_ENOENT ? (e->rc = VG_EINVAL) : rc;
	}
	runs = vg_path_join(vg_store_home(st), "runs");
	dir = vg_path_join(runs, p->id);
	free(runs);
	tasks = vg_path_join(dir, "tasks");
	if ((rc = vg_mkdir_p(tasks, 0700, e)) != 0) {
		free(tasks);
		free(dir);
		return rc;
	}
	free(tasks);
	path = vg_path_join(dir, "manifest.json");
	rc = vg_write_file_atomic(path, p->manifest_json,
	    strlen(p->manifest_json), 0600, e);
	free(path);
	if (rc == 0 && p->origin_json != NULL) {
		/* Beside the manifest for task-exec, which reads no
		 * database (its digest covers both). */
		path = vg_path_join(dir, "origin.json");
		rc = vg_write_file_atomic(path, p->origin_json,
		    strlen(p->origin_json), 0600, e);
		free(path);
	}
	if (rc != 0) {
		free(dir);
		return rc;
	}
	memset(&ri, 0, sizeof(ri));
	vg_strlcpy(ri.id, p->id, sizeof(ri.id));
	ri.name = vg_xstrdup(m->name);
	ri.file = vg_xstrdup(m->file);
	ri.scheduler = vg_xstrdup(vg_manifest_plugin(m, VG_PLUGIN_SCHEDULER));
	ri.backend = vg_xstrdup(vg_manifest_plugin(m, VG_PLUGIN_BACKEND));
	ri.dir = vg_xstrdup(dir);
	ri.created = vg_now();
	ri.ntasks = (int)p->ts->n;
	ri.origin = vg_xstrdup(p->origin_json);
	if ((rc = vg_store_begin(st, e)) != 0)
		goto out;
	if ((rc = vg_store_run_create(st, &ri, p->manifest_json, e)) != 0)
		goto fail;
	for (i = 0; i < p->ts->n; i++) {
		const char *why = p->denied != NULL ? p->denied[i] : NULL;

		vg_task_release(&tmp);
		t = vg_taskset_at(p->ts, i, &tmp);
		memset(&tr, 0, sizeof(tr));
		tr.index = t->index;
		tr.state = why != NULL ? VG_ST_DENIED : VG_ST_PENDING;
		tr.exit_code = -1;
		tr.memory = t->resources.memory;
		tr.time = t->resources.time;
		tr.timeout = m->timeout;
		if (why != NULL)
			vg_strlcpy(tr.reason, why, sizeof(tr.reason));
		vg_buf_reset(&mj);
		vg_buf_reset(&lb);
		vg_task_matrix_json(t, &mj);
		vg_task_label(t, &lb);
		if ((rc = vg_store_task_add(st, p->id, &tr, vg_buf_str(&mj),
		    vg_buf_str(&lb), e)) != 0)
			goto fail;
	}
	if ((rc = vg_store_commit(st, e)) != 0)
		goto fail;
	*dirp = dir;
	dir = NULL;
	goto out;
fail:
	vg_store_rollback(st);
out:
	vg_task_release(&tmp);
	vg_run_info_release(&ri);
	vg_buf_release(&mj);
	vg_buf_release(&lb);
	free(dir);
	return rc;
}

/*
 * Records task t of run run_id, now in its new state, with reason: the
 * task row and the event of attempt.  Every change of a task's state is
 * written this way.
 */
static int
record_task(struct vg_store *st, const char *run_id, struct vg_task_rec *t,
    int attempt, const char *reason, struct vg_err *e)
{
	int rc;

	vg_strlcpy(t->reason, reason, sizeof(t->reason));
	if ((rc = vg_store_task_put(st, run_id, t, e)) != 0)
		return rc;
	return vg_store_event(st, run_id, t->index, attempt, t->state, reason,
	    e);
}

int
vg_run_reset_failed(struct vg_store *st, const char *run_id, int *n,
    struct vg_err *e)
{
	struct vg_task_rec *v;
	size_t nv, i;
	int rc, count = 0;

	*n = 0;
	if ((rc = vg_store_tasks_load(st, run_id, &v, &nv, e)) != 0)
		return rc;
	if ((rc = vg_store_begin(st, e)) != 0)
		goto out;
	for (i = 0; i < nv; i++) {
		if (!vg_state_terminal(v[i].state) ||
		    vg_state_ok(v[i].state) ||
		    v[i].state == VG_ST_DENIED)
			continue;
		v[i].state = VG_ST_PENDING;
		v[i].tries = 0;
		v[i].next_at = 0;
		v[i].cancel_req = 0;
		if ((rc = record_task(st, run_id, &v[i], 0, "retry requested",
		    e)) != 0) {
			vg_store_rollback(st);
			goto out;
		}
		count++;
	}
	if ((rc = vg_store_commit(st, e)) != 0)
		vg_store_rollback(st);
	else
		*n = count;
out:
	free(v);
	return rc;
}

char *
vg_run_task_dir(const char *run_dir, int index)
{
	char idx[32], *tasks, *dir;

	snprintf(idx, sizeof(idx), "%d", index);
	tasks = vg_path_join(run_dir, "tasks");
	dir = vg_path_join(tasks, idx);
	free(tasks);
	return dir;
}

int
vg_run_reap(struct vg_store *st, const struct vg_run_info *r, int task,
    struct vg_buf *said, struct vg_err *e)
{
	const struct vg_backend_ops *ops;
	struct vg_manifest *m = NULL;
	struct vg_buf json = VG_BUF_INIT;
	char *dir;
	int rc, i;

	if (r->backend == NULL || (ops = vg_backend_find(r->backend)) == NULL ||
	    !vg_backend_can_reap(ops))
		return 0;
	/* Monitors that outlived their vigil would go on following. */
	for (i = 0; r->dir != NULL && i < r->ntasks; i++) {
		if (task >= 0 && i != task)
			continue;
		dir = vg_run_task_dir(r->dir, i);
		(void)vg_backend_monitor_kill(dir, 0);
		free(dir);
	}
	if ((rc = vg_store_run_manifest(st, r->id, &json, e)) == 0 &&
	    (rc = vg_manifest_from_json(vg_buf_str(&json), json.len, &m,
	    e)) == 0)
		rc = vg_backend_reap(ops, m, r->id, task, said, e);
	vg_manifest_free(m);
	vg_buf_release(&json);
	return rc;
}

int
vg_run_cancel_orphan(struct vg_store *st, const struct vg_run_info *r,
    int task, struct vg_buf *said, struct vg_err *e)
{
	const char *why = "cancelled by vigil cancel (no vigil was running)";
	const struct vg_scheduler_ops *ops;
	struct vg_sched_orphan *o = NULL;
	struct vg_task_rec *v;
	size_t n, no = 0, i;
	int rc, open = 0;

	(void)vg_kill_leftovers(r->id, task, NULL, NULL);
	if ((rc = vg_store_tasks_load(st, r->id, &v, &n, e)) != 0)
		return rc;
	ops = r->scheduler != NULL ? vg_scheduler_find(r->scheduler) : NULL;
	if (ops != NULL && !vg_scheduler_has(ops, VG_SCAP_LOCAL)) {
		o = vg_xcalloc(n > 0 ? n : 1, sizeof(*o));
		for (i = 0; i < n; i++) {
			if (vg_state_terminal(v[i].state) ||
			    (task >= 0 && v[i].index != task))
				continue;
			o[no].index = v[i].index;
			o[no].attempt = v[i].attempts;
			o[no].handle = v[i].handle;
			no++;
		}
		if ((rc = vg_scheduler_cancel_orphans(ops, r->id, r->dir, o, no,
		    task < 0, said, e)) != 0)
			goto out;
	} else {
		struct vg_buf reaped = VG_BUF_INIT;

		vg_buf_adds(said, "leftover processes killed");
		/* What the backend left running (containers, remote tasks,
		 * sandboxes) of the cancelled tasks. */
		rc = vg_run_reap(st, r, task, &reaped, e);
		while (reaped.len > 0 && reaped.data[reaped.len - 1] == '\n')
			reaped.data[--reaped.len] = '\0';
		if (reaped.len > 0)
			vg_buf_printf(said, "\n%s", vg_buf_str(&reaped));
		vg_buf_release(&reaped);
		if (rc != 0)
			goto out;
	}
	if ((rc = vg_store_begin(st, e)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (vg_state_terminal(v[i].state))
			continue;
		if (task >= 0 && v[i].index != task) {
			open++;
			continue;
		}
		v[i].state = VG_ST_CANCELLED;
		v[i].ended = vg_now();
		v[i].cancel_req = 0;
		if ((rc = record_task(st, r->id, &v[i], v[i].attempts, why,
		    e)) != 0)
			goto fail;
	}
	if (open == 0 && (rc = vg_store_run_set_state(st, r->id,
	    VG_ST_CANCELLED, why, e)) != 0)
		goto fail;
	if ((rc = vg_store_commit(st, e)) != 0)
		goto fail;
	goto out;
fail:
	vg_store_rollback(st);
out:
	free(o);
	free(v);
	return rc;
}

/*
 * show.c - how the run-related commands show runs: times and ages, the
 * state to display, and the JSON status of a run with its tasks (vigil
 * status --json and the report).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/path.h"
#include "common/state.h"
#include "runner/cli/show.h"
#include "runner/core/egress-log.h"
#include "runner/core/group.h"
#include "runner/core/origin.h"
#include "runner/core/outputs.h"
#include "runner/core/run.h"
#include "runner/core/store.h"
#include "runner/core/usage.h"

const char *
vg_fmt_time(double t, int iso, char *buf)
{
	struct tm tm;
	time_t s = (time_t)t;

	if (t <= 0)
		return "-";
	if (iso) {
		gmtime_r(&s, &tm);
		strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	} else {
		localtime_r(&s, &tm);
		strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm);
	}
	return buf;
}

const char *
vg_run_display_state(const struct vg_run_info *r)
{
	if (!vg_state_terminal(r->state) && r->pid > 0 &&
	    !vg_run_owner_alive(r))
		return "INTERRUPTED";
	if (r->state == VG_ST_PENDING && r->pid == 0)
		return "PENDING";
	return vg_state_name(r->state);
}

/* Writes a time as ISO 8601, or null. */
static void
json_time(struct vg_json_writer *w, double t)
{
	char buf[32];

	if (t <= 0)
		vg_json_null(w);
	else
		vg_json_str(w, vg_fmt_time(t, 1, buf));
}

/* Writes counts as {"PENDING": n, ...} with every state. */
static void
json_counts(struct vg_json_writer *w, const int *counts)
{
	int s;

	vg_json_obj_begin(w);
	for (s = 0; s < VG_ST__COUNT; s++) {
		vg_json_key(w, vg_state_name((enum vg_state)s));
		vg_json_int(w, counts[s]);
	}
	vg_json_obj_end(w);
}

/* Appends raw JSON (a stored matrix object) as a value. */
static void
json_raw(struct vg_json_writer *w, const char *raw)
{
	/* The writer tracks commas; emit a placeholder value through it,
	 * then replace it with the raw text. */
	vg_json_null(w);
	w->out->len -= 4;
	vg_buf_adds(w->out, raw != NULL && *raw != '\0' ? raw : "{}");
}

/* What task_json_cb writes with. */
struct task_json {
	struct vg_json_writer	*w;
	struct vg_usage_last	*last;		/* by index; may be NULL */
	size_t			 n;
	const char		*dir;		/* the run's directory */
	struct vg_store		*st;
	const char		*run;		/* the run's id */
	struct vg_err		*e;		/* a reuse key that could not
						   be read */
	int			 failed;	/* its rc */
};

/* Splits a key description into lines for show (each without its
 * newline) and calls fn with each. */
static void
desc_lines(const char *d, void (*fn)(void *arg, const char *s, size_t n),
    void *arg)
{
	const char *nl;

	while (*d != '\0') {
		nl = strchr(d, '\n');
		fn(arg, d, nl != NULL ? (size_t)(nl - d) : strlen(d));
		d = nl != NULL ? nl + 1 : d + strlen(d);
	}
}

/* One line of a key description as a JSON string. */
static void
desc_json(void *arg, const char *s, size_t n)
{
	vg_json_strn(arg, s, n);
}

/* One line of a key description, indented. */
static void
desc_text(void *arg, const char *s, size_t n)
{
	vg_buf_printf(arg, "  %.*s\n", (int)n, s);
}

int
vg_show_reuse(struct vg_store *st, const char *run, int index,
    struct vg_json_writer *w, struct vg_buf *out, struct vg_err *e)
{
	struct vg_buf key = VG_BUF_INIT, desc = VG_BUF_INIT;
	struct vg_buf from = VG_BUF_INIT;
	int rc, found;

	if ((rc = vg_store_task_key_get(st, run, index, &key, &desc, &from,
	    &found, e)) != 0)
		goto out;
	if (w != NULL) {
		vg_json_key(w, "reuse");
		if (!found) {
			vg_json_null(w);
			goto out;
		}
		vg_json_obj_begin(w);
		vg_json_key(w, "key");
		vg_json_str(w, vg_buf_str(&key));
		vg_json_key(w, "reused");
		vg_json_str(w, from.len > 0 ? vg_buf_str(&from) : NULL);
		vg_json_key(w, "description");
		vg_json_arr_begin(w);
		desc_lines(vg_buf_str(&desc), desc_json, w);
		vg_json_arr_end(w);
		vg_json_obj_end(w);
	} else if (found) {
		vg_buf_printf(out, "\nreuse key: %s%s%s\n", vg_buf_str(&key),
		    from.len > 0 ? ", reused " : "", vg_buf_str(&from));
		desc_lines(vg_buf_str(&desc), desc_text, out);
	}
out:
	vg_buf_release(&key);
	vg_buf_release(&desc);
	vg_buf_release(&from);
	return rc;
}

/* "outputs": what the last attempt's collection recorded
 * (tasks/<i>/outputs.json), or null. */
static void
task_outputs_json(struct vg_json_writer *w, const char *dir, int index)
{
	struct vg_buf b = VG_BUF_INIT;
	char idx[32], *tasks, *td;

	vg_json_key(w, "outputs");
	snprintf(idx, sizeof(idx), "%d", index);
	tasks = vg_path_join(dir != NULL ? dir : ".", "tasks");
	td = vg_path_join(tasks, idx);
	/* The task could have written the file itself: only a record
	 * that parses is shown. */
	if (dir != NULL && vg_outputs_read(td, &b) == 0 && b.len > 0 &&
	    vg_outputs_valid(vg_buf_str(&b), b.len)) {
		while (b.len > 0 && b.data[b.len - 1] == '\n')
			b.data[--b.len] = '\0';
		json_raw(w, vg_buf_str(&b));
	} else
		vg_json_null(w);
	free(tasks);
	free(td);
	vg_buf_release(&b);
}

static int
task_json_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct task_json *tj = arg;
	struct vg_json_writer *w = tj->w;
	static const struct vg_usage_last none;
	const struct vg_usage_last *l = &none;

	(void)label;
	vg_json_obj_begin(w);
	vg_json_key(w, "index");
	vg_json_int(w, t->index);
	vg_json_key(w, "matrix");
	json_raw(w, mj);
	vg_json_key(w, "state");
	vg_json_str(w, vg_state_name(t->state));
	vg_json_key(w, "exit_code");
	if (t->exit_code >= 0 && t->attempts > 0 &&
	    vg_state_terminal(t->state))
		vg_json_int(w, t->exit_code);
	else
		vg_json_null(w);
	vg_json_key(w, "signal");
	if (t->signal > 0)
		vg_json_int(w, t->signal);
	else
		vg_json_null(w);
	vg_json_key(w, "attempts");
	vg_json_int(w, t->attempts);
	vg_json_key(w, "started");
	json_time(w, t->started);
	vg_json_key(w, "ended");
	json_time(w, vg_state_terminal(t->state) ? t->ended : 0);
	vg_json_key(w, "elapsed");
	if (t->started > 0 && (t->ended > t->started ||
	    t->state == VG_ST_RUNNING))
		vg_json_num(w, (t->state == VG_ST_RUNNING ? vg_now() :
		    t->ended) - t->started);
	else
		vg_json_null(w);
	vg_json_key(w, "reason");
	vg_json_str(w, t->reason[0] != '\0' ? t->reason : NULL);
	vg_json_key(w, "job_id");
	vg_json_str(w, t->handle[0] != '\0' ? t->handle : NULL);
	vg_json_key(w, "node");
	vg_json_str(w, t->node[0] != '\0' ? t->node : NULL);
	vg_json_key(w, "gpus");
	vg_json_str(w, t->gpus[0] != '\0' ? t->gpus : NULL);
	if (tj->last != NULL && t->index >= 0 && (size_t)t->index < tj->n)
		l = &tj->last[t->index];
	vg_json_key(w, "usage");
	vg_usage_json(w, &l->u, l->wall);
	task_outputs_json(w, tj->dir, t->index);
	if ((tj->failed = vg_show_reuse(tj->st, tj->run, t->index, w, NULL,
	    tj->e)) != 0)
		return 1;
	vg_json_obj_end(w);
	return 0;
}

/* Keeps the last "confinement: " event of the run in arg (a vg_buf). */
static int
confinement_cb(void *arg, const struct vg_event_rec *ev)
{
	static const char prefix[] = "confinement: ";
	struct vg_buf *b = arg;

	if (ev->reason != NULL &&
	    strncmp(ev->reason, prefix, sizeof(prefix) - 1) == 0) {
		vg_buf_reset(b);
		vg_buf_adds(b, ev->reason + sizeof(prefix) - 1);
	}
	return 0;
}

int
vg_status_run_json(struct vg_store *st, const char *id, struct vg_buf *out,
    struct vg_err *e)
{
	struct vg_json_writer w;
	struct vg_run_info r;
	struct task_json tj = { &w, NULL, 0, NULL, st, NULL, e, 0 };
	struct vg_usage_sum sum;
	struct vg_buf conf = VG_BUF_INIT;
	char *grp = NULL, *holder = NULL, *wd;
	int rc;

	if ((rc = vg_store_run_get(st, id, &r, e)) != 0)
		return rc;
	tj.n = r.ntasks > 0 ? (size_t)r.ntasks : 0;
	tj.dir = r.dir;
	tj.run = r.id;
	if ((rc = vg_usage_load_last(st, r.id, tj.n, &tj.last, e)) != 0) {
		vg_run_info_release(&r);
		return rc;
	}
	vg_usage_sum_init(&sum);
	vg_usage_sum_last(&sum, tj.last, tj.n);
	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "id");
	vg_json_str(&w, r.id);
	vg_json_key(&w, "name");
	vg_json_str(&w, r.name);
	vg_json_key(&w, "file");
	vg_json_str(&w, r.file);
	vg_json_key(&w, "state");
	vg_json_str(&w, vg_run_display_state(&r));
	vg_json_key(&w, "reason");
	vg_json_str(&w, r.reason);
	vg_json_key(&w, "scheduler");
	vg_json_str(&w, r.scheduler);
	vg_json_key(&w, "backend");
	vg_json_str(&w, r.backend);
	vg_json_key(&w, "dir");
	vg_json_str(&w, r.dir);
	/* Where the run was made (null: before vigil recorded it). */
	wd = vg_origin_workdir(r.origin);
	vg_json_key(&w, "workdir");
	vg_json_str(&w, wd);
	free(wd);
	vg_json_key(&w, "created");
	json_time(&w, r.created);
	vg_json_key(&w, "ended");
	json_time(&w, r.ended);
	vg_json_key(&w, "pid");
	if (r.pid > 0 && vg_run_owner_alive(&r))
		vg_json_int(&w, r.pid);
	else
		vg_json_null(&w);
	vg_json_key(&w, "ntasks");
	vg_json_int(&w, r.ntasks);
	if ((rc = vg_store_group_get(st, r.id, &grp, &holder, e)) != 0) {
		vg_run_info_release(&r);
		return rc;
	}
	vg_json_key(&w, "group");
	vg_json_str(&w, grp);
	vg_json_key(&w, "holder");
	vg_json_str(&w, holder);
	free(grp);
	free(holder);
	/* What its tasks ran with (null: the backend does not say). */
	vg_json_key(&w, "confinement");
	if (vg_store_event_each(st, r.id, -1, confinement_cb, &conf,
	    e) == 0 && conf.len > 0)
		vg_json_str(&w, vg_buf_str(&conf));
	else
		vg_json_null(&w);
	vg_buf_release(&conf);
	vg_json_key(&w, "counts");
	json_counts(&w, r.counts);
	vg_json_key(&w, "usage");
	vg_usage_sum_json(&w, &sum);
	/* Connections through the egress proxy (docs/egress.md). */
	{
		struct vg_egress_sum es;

		if ((rc = vg_egress_sum_load(st, r.id, -1, &es, e)) != 0) {
			vg_egress_sum_release(&es);
			vg_run_info_release(&r);
			free(tj.last);
			return rc;
		}
		vg_json_key(&w, "egress");
		vg_egress_sum_json(&es, &w);
		vg_egress_sum_release(&es);
	}
	vg_json_key(&w, "tasks");
	vg_json_arr_begin(&w);
	rc = vg_store_task_each(st, r.id, -1, task_json_cb, &tj, e);
	if (rc == 0)
		rc = tj.failed;
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
	vg_run_info_release(&r);
	free(tj.last);
	return rc;
}

const char *
vg_fmt_age(double secs, char *buf, size_t len)
{
	long s = secs < 0 ? 0 : (long)secs;

	if (s >= 86400)
		snprintf(buf, len, "%ldd", s / 86400);
	else if (s >= 3600)
		snprintf(buf, len, "%ldh", s / 3600);
	else if (s >= 60)
		snprintf(buf, len, "%ldm", s / 60);
	else
		snprintf(buf, len, "%lds", s);
	return buf;
}

/*
 * cmd-status.c - vigil status [RUN[/TASK]]: the runs, newest first, or one
 * run's tasks, as an aligned table (like squeue) or as JSON with a stable
 * schema (docs/cli.md), with the CPU time, peak memory and CPU efficiency
 * of each task's latest attempt.  --watch redraws until the run ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/core/egress-log.h"
#include "runner/core/outputs.h"
#include "runner/core/origin.h"
#include "runner/cli/cmd.h"
#include "common/json.h"
#include "runner/cli/launch.h"
#include "runner/cli/show.h"
#include "common/path.h"
#include "runner/core/usage.h"
#include "schedulers/scheduler.h"

#define WATCH_MS	1000

/* Tasks a run's table lists without --all or --state: a larger run
 * lists only its tasks that did not succeed, at most this many. */
#define STATUS_ROWS	1000

/* Which tasks `vigil status RUN` lists. */
struct rows {
	int		 all;		/* --all */
	int		 state;		/* --state, or -1 */
};

struct list_ctx {
	struct vg_buf		*out;
	struct vg_json_writer	*w;
	int			 active;	/* runs not ended */
};

/* One row of the run list. */
static int
list_cb(void *arg, const struct vg_run_info *r)
{
	struct list_ctx *c = arg;
	char tbuf[32];
	int s, failed = 0, ok = r->counts[VG_ST_SUCCEEDED] +
	    r->counts[VG_ST_CACHED];

	if (!vg_state_terminal(r->state))
		c->active++;
	/* Cancelled and denied tasks did not fail: columns of their own. */
	for (s = 0; s < VG_ST__COUNT; s++)
		if (vg_state_terminal((enum vg_state)s) &&
		    !vg_state_ok((enum vg_state)s) && s != VG_ST_CANCELLED &&
		    s != VG_ST_DENIED)
			failed += r->counts[s];
	if (c->w != NULL) {
		vg_json_obj_begin(c->w);
		vg_json_key(c->w, "id");
		vg_json_str(c->w, r->id);
		vg_json_key(c->w, "name");
		vg_json_str(c->w, r->name);
		vg_json_key(c->w, "state");
		vg_json_str(c->w, vg_run_display_state(r));
		vg_json_key(c->w, "created");
		vg_json_str(c->w, vg_fmt_time(r->created, 1, tbuf));
		vg_json_key(c->w, "counts");
		vg_json_obj_begin(c->w);
		for (s = 0; s < VG_ST__COUNT; s++) {
			vg_json_key(c->w, vg_state_name((enum vg_state)s));
			vg_json_int(c->w, r->counts[s]);
		}
		vg_json_obj_end(c->w);
		vg_json_obj_end(c->w);
		return 0;
	}
	vg_buf_printf(c->out, "%-22s  %-14.14s  %-11s  %5d  %5d  %5d  %5d  "
	    "%5d  %5d  %s\n", r->id, r->name != NULL ? r->name : "-",
	    vg_run_display_state(r), r->ntasks, ok, failed,
	    r->counts[VG_ST_CANCELLED], r->counts[VG_ST_DENIED],
	    r->counts[VG_ST_RUNNING], vg_fmt_time(r->created, 0, tbuf));
	return 0;
}

/* Renders the list of runs into out; *active gets how many are open. */
static int
render_list(struct vg_store *st, int json, struct vg_buf *out, int *active)
{
	struct vg_json_writer w;
	struct list_ctx c = { out, NULL, 0 };
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	if (json) {
		vg_json_writer_init(&w, out);
		vg_json_obj_begin(&w);
		vg_json_key(&w, "runs");
		vg_json_arr_begin(&w);
		c.w = &w;
	} else
		vg_buf_printf(out, "%-22s  %-14s  %-11s  %5s  %5s  %5s  %5s  "
		    "%5s  %5s  %s\n", "RUN", "NAME", "STATE", "TASKS", "OK",
		    "FAIL", "CANC", "DENY", "RUN", "CREATED");
	rc = vg_store_run_list(st, list_cb, &c, &e);
	if (json) {
		vg_json_arr_end(&w);
		vg_json_obj_end(&w);
		vg_buf_addc(out, '\n');
	}
	if (rc != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	*active = c.active;
	return 0;
}

struct task_ctx {
	struct vg_buf		*out;
	int			 jobs;		/* show job ids and nodes */
	int			 only;
	struct vg_usage_last	*last;		/* by task index */
	size_t			 n;
	/* Some tasks of the run: each row's usage read by its key. */
	struct vg_store		*st;		/* NULL: last holds all */
	const char		*run;
	size_t			 shown;
	/* Outputs collected by the tasks listed (outputs.json). */
	const char		*dir;		/* the run's directory */
	long long		 ofiles, obytes;
	size_t			 otasks;	/* tasks with a record */
	size_t			 odests;	/* distinct destinations */
	char			*odest;		/* the first one */
};

/* Reads and parses task index's outputs record (tasks/<i>/outputs.json)
 * in dir; NULL when there is none or it does not parse (the task could
 * have written it).  Caller frees with vg_json_free. */
static struct vg_json_doc *
outputs_doc(const char *dir, int index)
{
	struct vg_json_doc *doc = NULL;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	char *td;

	vg_err_init(&e);
	td = vg_xasprintf("%s/tasks/%d", dir, index);
	if (vg_outputs_read(td, &b) != 0 || b.len == 0 ||
	    !vg_outputs_valid(vg_buf_str(&b), b.len) ||
	    vg_json_parse(vg_buf_str(&b), b.len, NULL, &doc, &e) != 0)
		doc = NULL;
	free(td);
	vg_buf_release(&b);
	return doc;
}

/* Adds task index's collected outputs to c's count. */
static void
outputs_count(struct task_ctx *c, int index)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *files;
	const char *dest;

	if (c->dir == NULL || (doc = outputs_doc(c->dir, index)) == NULL)
		return;
	root = vg_json_root(doc);
	files = vg_json_get(root, "files");
	dest = vg_json_get_str(root, "dest", NULL);
	if (files != NULL && files->type == VG_JSON_ARRAY && files->len > 0) {
		c->otasks++;
		c->ofiles += (long long)files->len;
		c->obytes += (long long)vg_json_get_num(root, "bytes", 0);
		if (dest != NULL && c->odest == NULL) {
			c->odest = vg_xstrdup(dest);
			c->odests = 1;
		} else if (dest != NULL && strcmp(dest, c->odest) != 0)
			c->odests++;
	}
	vg_json_free(doc);
}

/* Appends the line naming what the listed tasks collected. */
static void
outputs_line(const struct task_ctx *c, struct vg_buf *out)
{
	if (c->ofiles == 0)
		return;
	vg_buf_printf(out, "\noutputs: %lld file%s, %lld bytes, from %zu "
	    "task%s, in %s", c->ofiles, c->ofiles == 1 ? "" : "s", c->obytes,
	    c->otasks, c->otasks == 1 ? "" : "s", c->odest);
	if (c->odests > 1)
		vg_buf_printf(out, " and %zu more destination%s", c->odests - 1,
		    c->odests == 2 ? "" : "s");
	vg_buf_adds(out, " (vigil status RUN/TASK lists them)\n");
}

/* Appends the outputs task index collected after its last attempt, one
 * file a line, then what was left behind and why. */
static void
outputs_list(const char *dir, int index, struct vg_buf *out)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *l, *f;
	const char *err;
	size_t i;

	if ((doc = outputs_doc(dir, index)) == NULL)
		return;
	root = vg_json_root(doc);
	vg_buf_printf(out, "\noutputs (attempt %.0f, %s) in %s:\n",
	    vg_json_get_num(root, "attempt", 0),
	    vg_json_get_str(root, "state", "-"),
	    vg_json_get_str(root, "dest", "-"));
	l = vg_json_get(root, "files");
	for (i = 0; l != NULL && l->type == VG_JSON_ARRAY && i < l->len; i++) {
		f = l->items[i];
		vg_buf_printf(out, "  %s  %.0f bytes  from %s\n",
		    vg_json_get_str(f, "path", "?"),
		    vg_json_get_num(f, "bytes", 0),
		    vg_json_get_str(f, "from", "?"));
	}
	if (l == NULL || l->type != VG_JSON_ARRAY || l->len == 0)
		vg_buf_adds(out, "  (none)\n");
	l = vg_json_get(root, "skipped");
	for (i = 0; l != NULL && l->type == VG_JSON_ARRAY && i < l->len; i++) {
		f = l->items[i];
		vg_buf_printf(out, "  skipped %s (from %s): %s\n",
		    vg_json_get_str(f, "path", "?"),
		    vg_json_get_str(f, "from", "?"),
		    vg_json_get_str(f, "why", "?"));
	}
	if ((err = vg_json_get_str(root, "error", NULL)) != NULL)
		vg_buf_printf(out, "  error: %s\n", err);
	vg_json_free(doc);
}

/* Appends the CPU, PEAK MEM and EFF cells of one attempt. */
static void
usage_cells(struct vg_buf *out, const struct vg_usage *u, double wall)
{
	struct vg_buf b = VG_BUF_INIT;
	double eff = vg_usage_cpu_eff(u, wall);

	if (u->known & VG_USAGE_CPU)
		vg_buf_printf(&b, "%.1fs", u->cpu_user + u->cpu_sys);
	else
		vg_buf_addc(&b, '-');
	vg_buf_printf(out, "%8s  ", vg_buf_str(&b));
	vg_buf_reset(&b);
	if (u->known & VG_USAGE_RSS)
		vg_usage_fmt_bytes(&b, u->max_rss);
	else
		vg_buf_addc(&b, '-');
	vg_buf_printf(out, "%8s  ", vg_buf_str(&b));
	vg_buf_reset(&b);
	if (eff >= 0)
		vg_buf_printf(&b, "%.0f%%", eff * 100);
	else
		vg_buf_addc(&b, '-');
	vg_buf_printf(out, "%5s  ", vg_buf_str(&b));
	vg_buf_release(&b);
}

/* One row of a run's task table. */
static int
task_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct task_ctx *c = arg;
	char exitbuf[32], el[32];
	double end;

	(void)mj;
	c->shown++;
	outputs_count(c, t->index);
	if (c->st != NULL && c->last != NULL && t->index >= 0 &&
	    (size_t)t->index < c->n) {
		struct vg_err e;

		vg_err_init(&e);
		/* A row without its usage is still a row. */
		(void)vg_usage_load_last_into(c->st, c->run, c->last, c->n,
		    t->index, &e);
	}
	if (t->signal > 0)
		snprintf(exitbuf, sizeof(exitbuf), "sig %d", t->signal);
	else if (t->exit_code >= 0 && vg_state_terminal(t->state) &&
	    t->attempts > 0)
		snprintf(exitbuf, sizeof(exitbuf), "%d", t->exit_code);
	else
		snprintf(exitbuf, sizeof(exitbuf), "-");
	end = t->state == VG_ST_RUNNING ? vg_now() : t->ended;
	if (t->started > 0 && end >= t->started)
		snprintf(el, sizeof(el), "%.1fs", end - t->started);
	else
		snprintf(el, sizeof(el), "-");
	vg_buf_printf(c->out, "%5d  %-13s  %6s  %8d  %8s  ", t->index,
	    vg_state_name(t->state), exitbuf, t->attempts, el);
	if (c->last != NULL && t->index >= 0 && (size_t)t->index < c->n)
		usage_cells(c->out, &c->last[t->index].u,
		    c->last[t->index].wall);
	else
		usage_cells(c->out, &(struct vg_usage){ 0 }, 0);
	if (c->jobs)
		vg_buf_printf(c->out, "%-12s  %-12s  ", t->handle[0] ?
		    t->handle : "-", t->node[0] ? t->node : "-");
	vg_buf_printf(c->out, "%-24s  %s\n", label != NULL ? label : "-",
	    t->reason);
	return 0;
}

/* Appends what one attempt used and was given, where known. */
static void
attempt_usage(struct vg_buf *out, const struct vg_attempt_rec *a)
{
	const struct vg_usage *u = &a->usage;
	double wall = a->ended > a->started && a->started > 0 ?
	    a->ended - a->started : 0, eff = vg_usage_cpu_eff(u, wall);

	if (wall > 0)
		vg_buf_printf(out, "  wall %.1fs", wall);
	if (u->known & VG_USAGE_CPU)
		vg_buf_printf(out, "  cpu %.2fs (user %.2f, sys %.2f)",
		    u->cpu_user + u->cpu_sys, u->cpu_user, u->cpu_sys);
	if (eff >= 0)
		vg_buf_printf(out, "  eff %.0f%%", eff * 100);
	if (u->known & VG_USAGE_RSS) {
		vg_buf_adds(out, "  peak ");
		vg_usage_fmt_bytes(out, u->max_rss);
	}
	if (u->known & VG_USAGE_MEM) {
		vg_buf_adds(out, " of ");
		vg_usage_fmt_bytes(out, u->mem_limit);
	}
	if (u->known & VG_USAGE_CPUS)
		vg_buf_printf(out, "  %d cpu%s", u->cpus, u->cpus == 1 ?
		    "" : "s");
	if (u->known & VG_USAGE_GPUS)
		vg_buf_printf(out, "  %d gpu%s", u->gpus, u->gpus == 1 ?
		    "" : "s");
	if (a->node != NULL && *a->node != '\0')
		vg_buf_printf(out, "  on %s", a->node);
}

static int
attempt_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct vg_buf *out = arg;
	char tb[32];

	vg_buf_printf(out, "  attempt %d  %-13s  started %s", a->attempt,
	    vg_state_name(a->state), vg_fmt_time(a->started, 0, tb));
	if (a->signal > 0)
		vg_buf_printf(out, "  signal %d", a->signal);
	else if (vg_state_terminal(a->state) && a->exit_code >= 0)
		vg_buf_printf(out, "  exit %d", a->exit_code);
	if (a->handle != NULL && *a->handle != '\0')
		vg_buf_printf(out, "  %s", a->handle);
	if (a->gpus != NULL && *a->gpus != '\0')
		vg_buf_printf(out, "  gpus %s", a->gpus);
	attempt_usage(out, a);
	if (a->reason != NULL && *a->reason != '\0')
		vg_buf_printf(out, "  %s", a->reason);
	vg_buf_addc(out, '\n');
	return 0;
}

static int
event_cb(void *arg, const struct vg_event_rec *ev)
{
	struct vg_buf *out = arg;
	char tb[32];

	vg_buf_printf(out, "  %s  attempt %d  %-13s  %s\n",
	    vg_fmt_time(ev->time, 0, tb), ev->attempt,
	    vg_state_name(ev->state), ev->reason ? ev->reason : "");
	return 0;
}

/* Prints what the run's tasks ran with, its isolation downgrades,
 * notification deliveries and output stream notes (events of the run
 * itself). */
static int
downgrade_cb(void *arg, const struct vg_event_rec *ev)
{
	static const char prefix[] = "isolation downgraded: ";
	static const char confined[] = "confinement: ";
	static const char notify[] = "notify: ";
	static const char output[] = "output";
	struct vg_buf *out = arg;
	char tb[32];

	if (ev->reason != NULL &&
	    (strncmp(ev->reason, prefix, sizeof(prefix) - 1) == 0 ||
	    strncmp(ev->reason, confined, sizeof(confined) - 1) == 0))
		vg_buf_printf(out, "%s\n", ev->reason);
	else if (ev->reason != NULL &&
	    (strncmp(ev->reason, notify, sizeof(notify) - 1) == 0 ||
	    strncmp(ev->reason, output, sizeof(output) - 1) == 0))
		vg_buf_printf(out, "%s  %s\n", vg_fmt_time(ev->time, 0, tb),
		    ev->reason);
	return 0;
}

/* Appends the egress of the run (task -1) or of one task. */
static int
egress_text(struct vg_store *st, const char *run, int task,
    struct vg_buf *out, struct vg_err *e)
{
	struct vg_egress_sum s;
	int rc;

	if ((rc = vg_egress_sum_load(st, run, task, &s, e)) == 0)
		vg_egress_sum_text(&s, out);
	vg_egress_sum_release(&s);
	return rc;
}

/* Renders one run (and optionally one task's history) into out. */
static int
render_run(struct vg_store *st, const char *id, int task, int json,
    const struct rows *rw, struct vg_buf *out, int *active)
{
	struct task_ctx c = { 0 };
	struct vg_run_info r;
	struct vg_usage_sum sum;
	struct vg_buf line = VG_BUF_INIT;
	struct vg_err e;
	char tb[32], *wd;
	int rc, s, first = 1, some;

	vg_err_init(&e);
	if ((rc = vg_store_run_get(st, id, &r, &e)) != 0)
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	*active = !vg_state_terminal(r.state) && vg_run_owner_alive(&r);
	if (json) {
		rc = vg_status_run_json(st, r.id, out, &e);
		vg_buf_addc(out, '\n');
		goto out;
	}
	vg_buf_printf(out, "run %s  %s  %s  created %s\n", r.id,
	    r.name != NULL ? r.name : "-", vg_run_display_state(&r),
	    vg_fmt_time(r.created, 0, tb));
	vg_buf_printf(out, "%d task%s:", r.ntasks, r.ntasks == 1 ? "" : "s");
	for (s = 0; s < VG_ST__COUNT; s++) {
		if (r.counts[s] == 0)
			continue;
		vg_buf_printf(out, "%s %d %s", first ? "" : ",", r.counts[s],
		    vg_state_name((enum vg_state)s));
		first = 0;
	}
	vg_buf_printf(out, "  (%s, %s)  %s\n", r.scheduler, r.backend, r.dir);
	if ((wd = vg_origin_workdir(r.origin)) != NULL)
		vg_buf_printf(out, "workdir: %s\n", wd);
	free(wd);
	if (r.reason != NULL && vg_state_terminal(r.state))
		vg_buf_printf(out, "reason: %s\n", r.reason);
	if ((rc = vg_store_event_each(st, r.id, -1, downgrade_cb, out,
	    &e)) != 0)
		goto out;
	if (r.pid > 0 && vg_run_owner_alive(&r))
		vg_buf_printf(out, "driven by vigil pid %ld\n", (long)r.pid);
	else if (!vg_state_terminal(r.state) && r.pid > 0)
		vg_buf_printf(out, "its vigil is gone: 'vigil resume %s' "
		    "continues it\n", r.id);
	vg_buf_addc(out, '\n');
	memset(&c, 0, sizeof(c));
	c.out = out;
	c.dir = r.dir;
	c.n = r.ntasks > 0 ? (size_t)r.ntasks : 0;
	/* Some tasks of the run: a state asked for, or a large run's
	 * tasks that did not succeed; their usage is read row by row. */
	some = task < 0 && (rw->state >= 0 || (!rw->all &&
	    c.n > STATUS_ROWS));
	vg_usage_sum_init(&sum);
	if (some && (rw->state < 0 || r.counts[rw->state] <= STATUS_ROWS)) {
		c.last = vg_xcalloc(c.n + 1, sizeof(*c.last));
		c.st = st;
		c.run = r.id;
	} else if ((rc = vg_usage_load_last_of(st, r.id, c.n, task, &c.last,
	    &e)) != 0)
		goto out;
	else if (!some)
		vg_usage_sum_last(&sum, c.last, c.n);
	c.jobs = r.scheduler != NULL && vg_scheduler_has(
	    vg_scheduler_find(r.scheduler), VG_SCAP_JOBS);
	vg_buf_printf(out, "%5s  %-13s  %6s  %8s  %8s  %8s  %8s  %5s  ",
	    "TASK", "STATE", "EXIT", "ATTEMPTS", "ELAPSED", "CPU",
	    "PEAK MEM", "EFF");
	if (c.jobs)
		vg_buf_printf(out, "%-12s  %-12s  ", "JOBID", "NODE");
	vg_buf_printf(out, "%-24s  %s\n", "MATRIX", "REASON");
	if (rw->state >= 0)
		rc = vg_store_task_each_state(st, r.id,
		    (enum vg_state)rw->state, 0, 0, task_cb, &c, &e);
	else if (some)
		rc = vg_store_task_each_state(st, r.id, VG_ST_SUCCEEDED, 1,
		    STATUS_ROWS, task_cb, &c, &e);
	else
		rc = vg_store_task_each(st, r.id, task, task_cb, &c, &e);
	if (rc != 0)
		goto out;
	/* "(N SUCCEEDED, M CACHED)", the second only when M > 0 (%.0d of
	 * 0 prints nothing). */
	if (some && rw->state < 0 && c.shown < c.n)
		vg_buf_printf(out, "\n%zu of %zu tasks not listed (%d "
		    "SUCCEEDED%s%.0d%s): --all lists every task and their "
		    "usage, --state STATE the tasks in one state\n",
		    c.n - c.shown, c.n, r.counts[VG_ST_SUCCEEDED],
		    r.counts[VG_ST_CACHED] > 0 ? ", " : "",
		    r.counts[VG_ST_CACHED], r.counts[VG_ST_CACHED] > 0 ?
		    " CACHED" : "");
	if (task < 0)
		outputs_line(&c, out);
	else
		outputs_list(r.dir, task, out);
	if ((rc = egress_text(st, r.id, task, out, &e)) != 0)
		goto out;
	if (task < 0 && sum.n > 0) {
		vg_buf_reset(&line);
		vg_usage_line(&sum, &line);
		if (line.len > 0)
			vg_buf_printf(out, "\nusage: %s\n", vg_buf_str(&line));
		vg_buf_reset(&line);
		vg_usage_suggest(&sum, &line);
		if (line.len > 0)
			vg_buf_printf(out, "right size: %s\n",
			    vg_buf_str(&line));
	}
	if (task >= 0) {
		vg_buf_adds(out, "\nattempts:\n");
		if ((rc = vg_store_attempt_each(st, r.id, task, attempt_cb,
		    out, &e)) != 0)
			goto out;
		vg_buf_adds(out, "\nevents:\n");
		if ((rc = vg_store_event_each(st, r.id, task, event_cb, out,
		    &e)) != 0)
			goto out;
		rc = vg_show_reuse(st, r.id, task, NULL, out, &e);
	}
out:
	vg_run_info_release(&r);
	vg_buf_release(&line);
	free(c.last);
	free(c.odest);
	if (rc != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	return 0;
}

static int
cmd_status_exec(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct vg_buf out = VG_BUF_INIT;
	struct timespec ts = { WATCH_MS / 1000, (WATCH_MS % 1000) * 1000000L };
	char run[VG_RUN_ID_MAX + 32];
	int rc, task = -1, active = 0, json = vg_args_has(a, "json");
	int watch = vg_args_has(a, "watch"), tty = isatty(1);
	struct rows rw = { vg_args_has(a, "all"), -1 };
	const char *sn = vg_args_get(a, "state");

	if (a->argc == 1 && (rc = vg_parse_run_task(a->argv[0], run,
	    sizeof(run), &task)) != 0)
		return rc;
	if (sn != NULL && (rw.state = vg_state_parse(sn)) < 0)
		return vg_cmd_fail(VG_EXIT_USAGE, "unknown task state '%s' "
		    "(one of PENDING, QUEUED, RUNNING, SUCCEEDED, FAILED, "
		    "TIMEOUT, ...: docs/state.md)", sn);
	if ((sn != NULL || rw.all) && (a->argc != 1 || task >= 0 || json))
		return vg_cmd_fail(VG_EXIT_USAGE, "--%s lists the tasks of "
		    "one run: give RUN, without /TASK or --json", sn != NULL ?
		    "state" : "all");
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	for (;;) {
		vg_buf_reset(&out);
		if (a->argc == 1)
			rc = render_run(st, run, task, json, &rw, &out,
			    &active);
		else
			rc = render_list(st, json, &out, &active);
		if (rc != 0)
			break;
		if (watch && tty && !json)
			fputs("\033[H\033[2J", stdout);
		fputs(vg_buf_str(&out), stdout);
		if (!watch || !active)
			break;
		fflush(stdout);
		/* A display refresh, not a scheduler: a plain sleep. */
		nanosleep(&ts, NULL);
		if (!tty || json)
			fputs("\n", stdout);
	}
	vg_buf_release(&out);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_status = {
	.name = "status",
	.alias = "st",
	.args_usage = "[RUN[/TASK]]",
	.summary = "show runs, or one run's tasks",
	.help = "Without RUN: every run, newest first.  With RUN (an id, a "
	    "unique prefix\nof one, or 'last'): the run and its tasks (of a "
	    "run of more than 1000\ntasks, the first 1000 that did not "
	    "succeed; --all for every one).  With\nRUN/TASK: that task's "
	    "attempts and events too.",
	.opts = (const struct vg_opt[]){
		VG_OPT_JSON("print JSON (schema in docs/cli.md)"),
		{ .name = "watch", .shortname = 'w',
		  .help = "redraw every second until the run ends" },
		{ .name = "all", .shortname = 'a',
		  .help = "list every task of RUN, however many" },
		{ .name = "state", .has_arg = 1, .arg = "STATE",
		  .help = "list only the tasks of RUN in STATE" },
		{ NULL },
	},
	.min_args = 0,
	.max_args = 1,
	.ids = "runs",
	.exec = cmd_status_exec,
};

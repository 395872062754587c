/*
 * cmd-reuse.c - vigil reuse: lists and drops the results kept for reuse
 * (runner/core/reuse.h, docs/reuse.md), and the --reuse-only report of
 * run and submit: which tasks an earlier result stands for and which
 * would run.  Dropping an entry leaves its run and files alone (vigil gc
 * removes a run once no entry needs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/cli/show.h"
#include "runner/core/reuse.h"

/* What list prints with. */
struct list_ctx {
	struct vg_json_writer	*w;	/* --json, else NULL */
	size_t			 n;
};

/* Counts the lines of an entry's file list. */
static size_t
nfiles(const char *files)
{
	size_t n = 0;

	for (; files != NULL && *files != '\0'; files++)
		n += *files == '\n';
	return n;
}

/* One entry of vigil reuse list. */
static int
list_cb(void *arg, const struct vg_reuse_rec *r)
{
	struct list_ctx *c = arg;
	char tb[32];

	c->n++;
	if (c->w == NULL) {
		printf("%-32s  %s/%d/%d  %s  %zu file%s\n", r->key, r->run_id,
		    r->index, r->attempt, vg_fmt_time(r->created, 0, tb),
		    nfiles(r->files), nfiles(r->files) == 1 ? "" : "s");
		return 0;
	}
	vg_json_obj_begin(c->w);
	vg_json_key(c->w, "key");
	vg_json_str(c->w, r->key);
	vg_json_key(c->w, "run");
	vg_json_str(c->w, r->run_id);
	vg_json_key(c->w, "task");
	vg_json_int(c->w, r->index);
	vg_json_key(c->w, "attempt");
	vg_json_int(c->w, r->attempt);
	vg_json_key(c->w, "created");
	vg_json_str(c->w, vg_fmt_time(r->created, 1, tb));
	vg_json_key(c->w, "dir");
	vg_json_str(c->w, r->dir);
	vg_json_key(c->w, "files");
	vg_json_int(c->w, (long long)nfiles(r->files));
	vg_json_obj_end(c->w);
	return 0;
}

/* vigil reuse list [RUN[/TASK]]. */
static int
reuse_list(struct vg_store *st, const char *run, int task, int json)
{
	struct vg_json_writer w;
	struct list_ctx c = { json ? &w : NULL, 0 };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	if (json) {
		vg_json_writer_init(&w, &out);
		vg_json_arr_begin(&w);
	}
	rc = vg_store_reuse_each(st, run, task, list_cb, &c, &e);
	if (json) {
		vg_json_arr_end(&w);
		printf("%s\n", vg_buf_str(&out));
	} else if (rc == 0)
		printf("%zu result%s kept for reuse\n", c.n, c.n == 1 ? "" :
		    "s");
	vg_buf_release(&out);
	if (rc != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	return 0;
}

static int
cmd_reuse_exec(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct vg_run_info r;
	struct vg_err e;
	const char *sub = a->argv[0];
	char run[VG_RUN_ID_MAX + 32];
	long long n = 0;
	int rc, task = -1, all = vg_args_has(a, "all"), list;

	list = strcmp(sub, "list") == 0;
	if (!list && strcmp(sub, "drop") != 0)
		return vg_cmd_usage_error(a, "unknown reuse command '%s' "
		    "(valid: list, drop)", sub);
	if (!list && (a->argc == 2) == all)
		return vg_cmd_usage_error(a, "'reuse drop' takes RUN[/TASK] "
		    "or --all");
	if (list && all)
		return vg_cmd_usage_error(a, "--all is for 'reuse drop'");
	if (a->argc == 2 && (rc = vg_parse_run_task(a->argv[1], run,
	    sizeof(run), &task)) != 0)
		return rc;
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	memset(&r, 0, sizeof(r));
	if (a->argc == 2 && (rc = vg_store_run_get(st, run, &r, &e)) != 0) {
		rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
		goto out;
	}
	if (list)
		rc = reuse_list(st, a->argc == 2 ? r.id : NULL, task,
		    vg_args_has(a, "json"));
	else if (vg_store_reuse_drop(st, a->argc == 2 ? r.id : NULL, task,
	    &n, &e) != 0)
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	else
		printf("%lld result%s dropped\n", n, n == 1 ? "" : "s");
out:
	vg_run_info_release(&r);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_reuse = {
	.name = "reuse",
	.args_usage = "list [RUN[/TASK]]|drop RUN[/TASK]|drop --all",
	.summary = "list or drop the results kept for reuse",
	.help = "A run with 'reuse: true' keeps the key of each successful "
	    "task, and a\nlater run reuses that task's result instead of "
	    "running it again\n(docs/reuse.md).  'list' shows the results "
	    "kept (key, RUN/TASK/ATTEMPT,\nwhen, how many files); 'drop' "
	    "forgets those of one run or task, or all of\nthem with --all, "
	    "so that the next run runs them again and vigil gc may\nremove "
	    "their runs.",
	.opts = (const struct vg_opt[]){
		VG_OPT_JSON("print the list as JSON"),
		{ .name = "all", .help = "drop: every result kept" },
		{ NULL },
	},
	.min_args = 1,
	.max_args = 2,
	.ids = "runs",
	.exec = cmd_reuse_exec,
};

/* The --reuse-only line or JSON object of one task. */
static void
only_task(struct vg_json_writer *w, const struct vg_task *t,
    const char *key, const struct vg_reuse_rec *rec, int hit)
{
	struct vg_buf lb = VG_BUF_INIT;
	char from[96] = "";

	if (hit)
		snprintf(from, sizeof(from), "%s/%d/%d", rec->run_id,
		    rec->index, rec->attempt);
	vg_task_label(t, &lb);
	if (w == NULL)
		printf("%-5d %-6s %-32s %-24s %s\n", t->index,
		    hit ? "reuse" : "run", key, vg_buf_str(&lb), from);
	else {
		vg_json_obj_begin(w);
		vg_json_key(w, "index");
		vg_json_int(w, t->index);
		vg_json_key(w, "key");
		vg_json_str(w, key);
		vg_json_key(w, "reuse");
		vg_json_str(w, hit ? from : NULL);
		vg_json_obj_end(w);
	}
	vg_buf_release(&lb);
}

/* Prints which tasks of ts an earlier result stands for; runs none. */
static int
reuse_only(const struct vg_manifest *m, const struct vg_taskset *ts,
    int json)
{
	struct vg_reuse r;
	struct vg_store *st = NULL;
	struct vg_json_writer w;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_task tmp = { 0 };
	const struct vg_task *t;
	struct vg_err e;
	char key[VG_REUSE_KEY_LEN + 1];
	size_t i, nhit = 0;
	int rc, hit;

	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_reuse_init(&r, st, m, vg_backend_find(
	    vg_manifest_plugin(m, VG_PLUGIN_BACKEND)), &e)) != 0)
		goto out;
	if (json) {
		vg_json_writer_init(&w, &out);
		vg_json_obj_begin(&w);
		vg_json_key(&w, "tasks");
		vg_json_arr_begin(&w);
	} else
		printf("%-5s %-6s %-32s %-24s %s\n", "TASK", "DOES", "KEY",
		    "MATRIX", "REUSES");
	for (i = 0; i < ts->n && rc == 0; i++) {
		vg_task_release(&tmp);
		t = vg_taskset_at(ts, i, &tmp);
		vg_reuse_key(&r, t, key);
		if ((rc = vg_reuse_find(&r, key, &hit, &e)) != 0)
			break;
		nhit += hit != 0;
		only_task(json ? &w : NULL, t, key, &r.rec, hit);
	}
	if (rc == 0 && json) {
		vg_json_arr_end(&w);
		vg_json_key(&w, "reused");
		vg_json_int(&w, (long long)nhit);
		vg_json_key(&w, "would_run");
		vg_json_int(&w, (long long)(ts->n - nhit));
		vg_json_obj_end(&w);
		printf("%s\n", vg_buf_str(&out));
	} else if (rc == 0)
		printf("%zu task%s: %zu reused, %zu would run; nothing was "
		    "run\n", ts->n, ts->n == 1 ? "" : "s", nhit, ts->n - nhit);
out:
	vg_task_release(&tmp);
	vg_reuse_release(&r);
	vg_buf_release(&out);
	vg_store_close(st);
	if (rc != 0)
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	return vg_cmd_finish_stdout(VG_EXIT_OK);
}

int
vg_launch_reuse_flags(struct vg_args *a, struct vg_manifest *m,
    const struct vg_taskset *ts, int json, int *done)
{
	*done = 0;
	if (vg_args_has(a, "no-reuse") && vg_args_has(a, "reuse-only"))
		return vg_cmd_usage_error(a, "--no-reuse and --reuse-only "
		    "do not go together");
	if (vg_args_has(a, "no-reuse"))
		m->reuse = 0;
	if (!vg_args_has(a, "reuse-only"))
		return 0;
	*done = 1;
	return reuse_only(m, ts, json);
}

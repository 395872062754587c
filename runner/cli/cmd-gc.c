/*
 * cmd-gc.c - vigil gc: removes ended runs older than --older-than (their
 * run directories and database rows), then asks every backend that can
 * to reap leftovers of dead runs (containers, remote directories).  Each
 * removed run's backend first reaps what it left of that run
 * (vg_run_reap, with the run's stored manifest: the ssh host), then every
 * backend reaps what dead owners left (by their owner labels).
 * Sessions (runner/core/session.c): those whose keeper is gone or whose
 * time is up are closed, ended ones older than the cutoff removed.
 * Runs that have not ended are never removed: they may be resumed.
 * Policy audit records older than --audit-older-than (default 90 days)
 * are deleted too: every vigil check and exec adds one, so the table
 * would otherwise grow without bound.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "common/path.h"
#include "runner/core/session.h"
#include "common/str.h"
#include "runner/core/run.h"

/* Default age: 30 days. */
#define GC_DEFAULT_AGE	(30.0 * 86400)
/* Default age of the policy audit records kept: 90 days. */
#define GC_AUDIT_AGE	(90.0 * 86400)

struct gc_ctx {
	double		 cutoff;
	struct vg_strv	 reused;	/* runs results kept for reuse
					   need (kept unless --drop-reuse) */
	struct vg_strv	 ids;
	struct vg_strv	 dirs;
	struct vg_strv	 backends;
	int		*ntasks;
	size_t		 cap;
};

static int
gc_cb(void *arg, const struct vg_run_info *r)
{
	struct gc_ctx *c = arg;
	double t = r->ended > 0 ? r->ended : r->created;

	if (!vg_state_terminal(r->state) || t > c->cutoff)
		return 0;
	if (vg_strv_contains(&c->reused, r->id)) {
		printf("kept %s: it holds results kept for reuse (vigil reuse "
		    "drop %s, or gc --drop-reuse)\n", r->id, r->id);
		return 0;
	}
	c->ntasks = vg_xgrow(c->ntasks, &c->cap, c->ids.n + 1,
	    sizeof(*c->ntasks));
	c->ntasks[c->ids.n] = r->ntasks;
	vg_strv_push(&c->ids, r->id);
	vg_strv_push(&c->dirs, r->dir != NULL ? r->dir : "");
	vg_strv_push(&c->backends, r->backend != NULL ? r->backend : "");
	return 0;
}

/* Lets run i's backend remove what it left of the run before its
 * records go; a failure is told and does not stop gc. */
static void
gc_reap_run(struct vg_store *st, struct gc_ctx *c, size_t i,
    struct vg_buf *report)
{
	struct vg_run_info r;
	struct vg_err e;
	char *dir;

	memset(&r, 0, sizeof(r));
	vg_strlcpy(r.id, c->ids.v[i], sizeof(r.id));
	/* vigil's own place for the run, not the recorded one. */
	dir = vg_xasprintf("%s/runs/%s", vg_store_home(st), r.id);
	r.dir = dir;
	r.backend = *c->backends.v[i] != '\0' ? c->backends.v[i] : NULL;
	r.ntasks = c->ntasks[i];
	vg_buf_reset(report);
	vg_err_init(&e);
	if (vg_run_reap(st, &r, -1, report, &e) != 0)
		fprintf(stderr, "vigil: gc: run %s: leftovers not removed: "
		    "%s\n", r.id, e.msg);
	if (report->len > 0)
		printf("%s%s", vg_buf_str(report),
		    report->data[report->len - 1] == '\n' ? "" : "\n");
	free(dir);
}

/*
 * Removes run id's directory: always HOME/runs/ID, found through the
 * runs directory's descriptor (the home is the user's own, vg_store_open
 * checked it) and removed only when the user owns it.  The directory the
 * database records is never trusted: one that is not that one is told
 * and left alone.  Returns 0 or an exit status.
 */
static int
gc_remove_dir(struct vg_store *st, int runs_fd, const char *id,
    const char *recorded)
{
	char *want = vg_xasprintf("%s/runs/%s", vg_store_home(st), id);
	struct vg_err e;
	int rc = 0;

	vg_err_init(&e);
	if (id[0] == '\0' || id[0] == '.' || strchr(id, '/') != NULL)
		fprintf(stderr, "vigil: gc: run '%s': not a run id; its "
		    "directory is left alone\n", id);
	else if (*recorded != '\0' && strcmp(recorded, want) != 0)
		fprintf(stderr, "vigil: gc: run %s: its recorded directory "
		    "'%s' is not vigil's ('%s'): left alone\n", id, recorded,
		    want);
	else if (runs_fd < 0)
		fprintf(stderr, "vigil: gc: run %s: cannot open '%s/runs': "
		    "its directory is left alone\n", id, vg_store_home(st));
	else if (vg_rm_rf_at(runs_fd, id, want, &e) != 0) {
		if (e.rc == VG_EDENIED)
			fprintf(stderr, "vigil: gc: run %s: %s\n", id, e.msg);
		else
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	}
	free(want);
	return rc;
}

static int
cmd_gc_exec(struct vg_args *a)
{
	const struct vg_backend_ops *const *b;
	struct gc_ctx c;
	struct vg_store *st = NULL;
	struct vg_buf report = VG_BUF_INIT;
	struct vg_err e;
	const char *age_s = vg_args_get(a, "older-than");
	const char *aud_s = vg_args_get(a, "audit-older-than");
	double age = GC_DEFAULT_AGE, aud = GC_AUDIT_AGE;
	long long pruned = 0;
	int rc = 0, dry = vg_args_has(a, "dry-run"), runs_fd;
	char *runs;
	size_t i;

	if (age_s != NULL && (vg_parse_duration(age_s, &age) != 0 || age < 0))
		return vg_cmd_usage_error(a, "--older-than takes a duration "
		    "(30d, 12h, 90m, 0), not '%s'", age_s);
	if (aud_s != NULL && (vg_parse_duration(aud_s, &aud) != 0 || aud < 0))
		return vg_cmd_usage_error(a, "--audit-older-than takes a "
		    "duration (90d, 12h, 90m, 0), not '%s'", aud_s);
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	runs = vg_path_join(vg_store_home(st), "runs");
	runs_fd = open(runs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(runs);
	memset(&c, 0, sizeof(c));
	c.cutoff = vg_now() - age;
	vg_err_init(&e);
	if ((!vg_args_has(a, "drop-reuse") &&
	    (rc = vg_store_reuse_runs(st, &c.reused, &e)) != 0) ||
	    (rc = vg_store_run_list(st, gc_cb, &c, &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	for (i = 0; i < c.ids.n; i++) {
		printf("%s %s\n", dry ? "would remove" : "removed",
		    c.ids.v[i]);
		if (dry)
			continue;
		if (!vg_args_has(a, "no-reap"))
			gc_reap_run(st, &c, i, &report);
		if ((rc = gc_remove_dir(st, runs_fd, c.ids.v[i],
		    c.dirs.v[i])) != 0)
			goto out;
		if ((rc = vg_store_run_delete(st, c.ids.v[i], &e)) != 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
			goto out;
		}
	}
	printf("%zu run%s %s\n", c.ids.n, c.ids.n == 1 ? "" : "s",
	    dry ? "would be removed" : "removed");
	if (!dry) {
		if ((rc = vg_store_audit_prune(st, vg_now() - aud, &pruned,
		    &e)) != 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
			goto out;
		}
		printf("%lld audit record%s removed\n", pruned, pruned == 1 ?
		    "" : "s");
	}
	/* Sessions: those whose keeper is gone or time is up are closed,
	 * ended ones older than the cutoff removed (docs/sessions.md). */
	vg_err_init(&e);
	vg_buf_reset(&report);
	if (vg_sess_gc(st, c.cutoff, dry, &report, &e) != 0) {
		fprintf(stderr, "vigil: gc: %s\n", e.msg);
		rc = VG_EXIT_INTERNAL;
	}
	if (report.len > 0)
		fwrite(report.data, 1, report.len, stdout);
	vg_buf_reset(&report);
	if (dry || vg_args_has(a, "no-reap"))
		goto out;
	for (b = vg_backends; *b != NULL; b++) {
		if (!vg_backend_can_reap(*b))
			continue;
		vg_buf_reset(&report);
		vg_err_init(&e);
		if (vg_backend_reap(*b, NULL, NULL, -1, &report, &e) != 0) {
			fprintf(stderr, "vigil: gc: backend '%s': %s\n",
			    (*b)->p.name, e.msg);
			rc = VG_EXIT_INTERNAL;
		}
		if (report.len > 0)
			printf("%s%s", vg_buf_str(&report),
			    report.data[report.len - 1] == '\n' ? "" : "\n");
	}
out:
	vg_strv_release(&c.reused);
	vg_strv_release(&c.ids);
	vg_strv_release(&c.dirs);
	vg_strv_release(&c.backends);
	free(c.ntasks);
	vg_buf_release(&report);
	vg_store_close(st);
	if (runs_fd >= 0)
		close(runs_fd);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_gc = {
	.name = "gc",
	.args_usage = "",
	.summary = "remove old ended runs and backend leftovers",
	.help = "Removes the run directories and records of runs that ended "
	    "more than\n--older-than ago (default 30d; 0 = every ended run), "
	    "closes sessions whose\nkeeper is gone or whose time is up and "
	    "removes ended ones as old, then\nlets each backend reap leftovers "
	    "of dead runs (docker containers, remote\ndirs).  Runs that have "
	    "not ended are kept, and so are runs that results\nkept for "
	    "reuse need (vigil reuse; --drop-reuse removes them too).\n"
	    "Policy audit records older than --audit-older-than (default "
	    "90d;\n0 = all) are deleted.",
	.opts = (const struct vg_opt[]){
		{ .name = "older-than", .has_arg = 1, .arg = "AGE",
		  .help = "only runs ended longer ago (default 30d)" },
		{ .name = "audit-older-than", .has_arg = 1, .arg = "AGE",
		  .help = "delete policy audit records older than AGE "
		  "(default 90d)" },
		VG_OPT_DRY_RUN("say what would be removed, remove nothing"),
		{ .name = "no-reap", .help = "skip the backends' reap step" },
		{ .name = "drop-reuse", .help = "remove old runs even when "
		  "results kept for reuse need them (vigil reuse)" },
		{ NULL },
	},
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_gc_exec,
};

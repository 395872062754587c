/*
 * cmd-cancel.c - vigil cancel RUN[/TASK]: asks the vigil driving the run
 * to cancel it (SIGTERM) or one task (a mark in the store, then SIGUSR1),
 * and waits for it to happen.  When no vigil drives the run any more, it
 * stops what is left itself: the run's leftover processes, and for a
 * Slurm run its jobs (the ids in the store, plus those of the job
 * journal a dead vigil did not get to record), with one scancel per
 * array job; then it records the unfinished tasks CANCELLED.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedulers/slurm.h"
#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/leftover.h"
#include "common/path.h"

#define WAIT_STEP_MS	100

/*
 * Cancels the Slurm array elements of the unfinished tasks of v (task < 0:
 * all): the job id each task's row holds, and every journal entry of its
 * current or a later attempt (submitted, not yet recorded).  *nel gets
 * the number of elements, *calls the scancel calls; *byname is set when
 * the whole run's jobs were also cancelled by name.
 */
static int
cancel_slurm(const struct vg_run_info *r, const struct vg_task_rec *v,
    size_t n, int task, size_t *nel, size_t *calls, int *byname,
    struct vg_err *e)
{
	struct vg_slurm_jentry *j = NULL, *el = NULL, x;
	size_t nj = 0, ne = 0, cap = 0, i, k;
	int rc;
	char c;

	*nel = *calls = 0;
	*byname = 0;
	if ((rc = vg_slurm_journal_load(r->dir, &j, &nj, e)) != 0)
		return rc;
	for (i = 0; i < n; i++) {
		if (vg_state_terminal(v[i].state) ||
		    (task >= 0 && v[i].index != task))
			continue;
		memset(&x, 0, sizeof(x));
		if (sscanf(v[i].handle, "%lu_%ld%c", &x.job, &x.task,
		    &c) == 2) {
			el = vg_xgrow(el, &cap, ne + 1, sizeof(*el));
			el[ne++] = x;
		}
		for (k = 0; k < nj; k++)
			if (j[k].index == v[i].index &&
			    j[k].attempt >= v[i].attempts) {
				el = vg_xgrow(el, &cap, ne + 1, sizeof(*el));
				el[ne++] = j[k];
			}
	}
	rc = vg_slurm_cancel_elements(el, ne, calls, e);
	/* A chunk whose job id the dead vigil never journaled: its jobs are
	 * found by the run's job name. */
	if (rc == 0 && task < 0 && vg_slurm_journal_unjournaled(r->dir)) {
		const char *argv[] = { "scancel", "--quiet", "--name", r->id,
		    NULL };

		(*calls)++;
		*byname = 1;
		rc = vg_slurm_run(argv, NULL, NULL, 30000, e);
	}
	/* Sorted now: count distinct elements. */
	for (i = 0; i < ne; i++)
		if (i == 0 || el[i].job != el[i - 1].job ||
		    el[i].task != el[i - 1].task)
			(*nel)++;
	free(el);
	free(j);
	return rc;
}

/*
 * Stops what a run with no driver left running and records its unfinished
 * tasks as CANCELLED.  For a Slurm run, *nel and *calls say how many array
 * elements were cancelled with how many scancel calls; when scancel fails
 * nothing is recorded.
 */
static int
cancel_orphaned(struct vg_store *st, const struct vg_run_info *r, int task,
    size_t *nel, size_t *calls, int *byname, struct vg_err *e)
{
	const char *why = "cancelled by vigil cancel (no vigil was running)";
	struct vg_task_rec *v;
	size_t n, i;
	int rc, open = 0;

	*nel = *calls = 0;
	*byname = 0;
	(void)vg_kill_leftovers(r->id, task, NULL, NULL);
	if ((rc = vg_store_tasks_load(st, r->id, &v, &n, e)) != 0)
		return rc;
	if (r->scheduler != NULL && strcmp(r->scheduler, "slurm") == 0 &&
	    (rc = cancel_slurm(r, v, n, task, nel, calls, byname, e)) != 0) {
		vg_err_prefix(e, "cannot cancel the run's Slurm jobs (nothing "
		    "recorded): ");
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
		snprintf(v[i].reason, sizeof(v[i].reason), "%s", why);
		if ((rc = vg_store_task_put(st, r->id, &v[i], e)) != 0 ||
		    (rc = vg_store_event(st, r->id, v[i].index, v[i].attempts,
		    VG_ST_CANCELLED, why, e)) != 0)
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
	free(v);
	return rc;
}

static int
state_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	(void)mj;
	(void)label;
	*(enum vg_state *)arg = t->state;
	return 1;
}

/* Waits until the run (task < 0) or the task has ended. */
static int
wait_ended(struct vg_store *st, const char *id, int task, long max_ms)
{
	struct timespec step = { 0, WAIT_STEP_MS * 1000000L };
	struct vg_run_info r;
	struct vg_err e;
	enum vg_state s;
	long waited;
	int done;

	for (waited = 0; waited <= max_ms; waited += WAIT_STEP_MS) {
		vg_err_init(&e);
		if (vg_store_run_get(st, id, &r, &e) != 0)
			return 0;
		done = vg_state_terminal(r.state) || !vg_run_owner_alive(&r);
		vg_run_info_release(&r);
		if (!done && task >= 0) {
			s = VG_ST_PENDING;
			if (vg_store_task_each(st, id, task, state_cb, &s,
			    &e) == 0 && vg_state_terminal(s))
				done = 1;
		}
		if (done)
			return 1;
		nanosleep(&step, NULL);
	}
	return 0;
}

static int
cmd_cancel_exec(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct vg_run_info r;
	struct vg_err e;
	char run[VG_RUN_ID_MAX + 32], what[VG_RUN_ID_MAX + 32];
	int rc, task, marked, byname;
	size_t nel, calls;
	long wait_s;

	if (vg_args_int(a, "wait", 0, 86400, 30, &wait_s) != 0)
		return VG_EXIT_USAGE;
	if ((rc = vg_parse_run_task(a->argv[0], run, sizeof(run), &task)) != 0)
		return rc;
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_store_run_get(st, run, &r, &e)) != 0) {
		vg_store_close(st);
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	}
	if (task >= 0)
		snprintf(what, sizeof(what), "%s/%d", r.id, task);
	else
		snprintf(what, sizeof(what), "%s", r.id);
	if (task >= r.ntasks) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s' has no task %d",
		    r.id, task);
		goto out;
	}
	if (vg_state_terminal(r.state)) {
		printf("%s: already ended (%s), nothing to cancel\n", what,
		    vg_state_name(r.state));
		goto out;
	}
	if ((rc = vg_store_task_request_cancel(st, r.id, task, &marked,
	    &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	if (task >= 0 && marked == 0) {
		printf("%s: already ended, nothing to cancel\n", what);
		goto out;
	}
	if (vg_run_owner_alive(&r)) {
		if (kill(r.pid, task >= 0 ? SIGUSR1 : SIGTERM) != 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "cannot signal vigil "
			    "process %ld: %s", (long)r.pid, strerror(errno));
			goto out;
		}
		printf("%s: cancelling (vigil process %ld)\n", what,
		    (long)r.pid);
		fflush(stdout);
		if (wait_s > 0 && !wait_ended(st, r.id, task, wait_s * 1000)) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s: not ended after "
			    "%lds; see 'vigil status %s'", what, wait_s, r.id);
			goto out;
		}
		if (wait_s > 0)
			printf("%s: cancelled\n", what);
		goto out;
	}
	if ((rc = cancel_orphaned(st, &r, task, &nel, &calls, &byname,
	    &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	if (r.scheduler != NULL && strcmp(r.scheduler, "slurm") == 0)
		printf("%s: cancelled (no vigil was driving it; %zu Slurm "
		    "array element(s)%s cancelled, %zu scancel call(s))\n",
		    what, nel, byname ? " and the jobs named after the run" :
		    "", calls);
	else
		printf("%s: cancelled (no vigil was driving it; leftover "
		    "processes killed)\n", what);
out:
	vg_run_info_release(&r);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_cancel = {
	.name = "cancel",
	.args_usage = "RUN[/TASK]",
	.summary = "cancel a run or one task",
	.help = "Signals the vigil driving RUN: its tasks get SIGTERM, then "
	    "SIGKILL after\nkill_grace, and end CANCELLED.  With RUN/TASK only "
	    "that task.  When no\nvigil drives the run (it was killed), kills "
	    "the run's leftover processes\n(scancels a Slurm run's jobs) and "
	    "records its unfinished tasks\nCANCELLED.  Waits up to --wait "
	    "seconds (default 30, 0: do not wait)\nfor the cancel to take "
	    "effect.",
	.opts = (const struct vg_opt[]){
		{ .name = "wait", .has_arg = 1, .arg = "SECONDS",
		  .help = "how long to wait for the end (default 30)" },
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_cancel_exec,
};

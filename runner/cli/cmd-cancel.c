/*
 * cmd-cancel.c - vigil cancel RUN[/TASK]: asks the vigil driving the run
 * to cancel it (SIGTERM) or one task (a mark in the store, then SIGUSR1),
 * and waits for it to happen.  When no vigil drives the run any more,
 * the driver's vg_run_cancel_orphan stops what is left (the run's
 * leftover processes, and through the run's scheduler whatever that
 * still holds) and records the unfinished tasks CANCELLED; this file
 * only reports what was stopped.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/run.h"
#include "common/str.h"

#define WAIT_STEP_MS	100

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
			if (vg_store_task_state(st, id, task, &s, &e) == 0 &&
			    vg_state_terminal(s))
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
	struct vg_buf said = VG_BUF_INIT;
	struct vg_store *st = NULL;
	struct vg_run_info r;
	struct vg_err e;
	char run[VG_RUN_ID_MAX + 32], what[VG_RUN_ID_MAX + 32];
	int rc, task, marked, claimed = 0;
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
		vg_strlcpy(what, r.id, sizeof(what));
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
again:
	if (vg_run_owner_elsewhere(&r)) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "%s: driven by vigil process "
		    "%ld on host '%s', which cannot be signalled from here; "
		    "run 'vigil cancel %s' there", what, (long)r.pid, r.host,
		    what);
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
	/* No driver: this vigil becomes it for the time of the cancel, so
	 * a resume started now cannot start the tasks being cancelled (nor
	 * this cancel kill a resume's); when one won, it is signalled. */
	if ((rc = vg_run_claim(st, &r, &e)) != 0) {
		if (rc == VG_EAGAIN && !claimed++)
			goto again;
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	/* The claim is given up either way; the first error is said. */
	rc = vg_run_cancel_orphan(st, &r, task, &said, &e);
	if (rc == 0)
		rc = vg_store_run_set_owner(st, r.id, 0, 0, &e);
	else
		(void)vg_store_run_set_owner(st, r.id, 0, 0, NULL);
	if (rc != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	printf("%s: cancelled (no vigil was driving it; %s)\n", what,
	    vg_buf_str(&said));
out:
	vg_buf_release(&said);
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
	.ids = "runs",
	.exec = cmd_cancel_exec,
};

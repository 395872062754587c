/*
 * cmd-retry.c - vigil retry RUN --failed: runs the tasks of an ended run
 * that did not succeed (every terminal state but SUCCEEDED and DENIED)
 * again, in the foreground, each with a fresh retry budget, where the
 * run was made (runner/core/origin.h).  Attempt numbers continue, so
 * earlier attempts stay in the history.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/cli/show.h"

static int
cmd_retry_exec(struct vg_args *a)
{
	struct vg_manifest *m = NULL;
	struct vg_taskset ts = { NULL, 0, NULL };
	struct vg_store *st = NULL;
	struct vg_run_info r;
	struct vg_err e;
	long jobs;
	int rc, n;

	if (!vg_args_has(a, "failed"))
		return vg_cmd_usage_error(a, "say which tasks: --failed");
	if (vg_args_int(a, "jobs", 1, 100000, 0, &jobs) != 0)
		return VG_EXIT_USAGE;
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_store_run_get(st, a->argv[0], &r, &e)) != 0) {
		vg_store_close(st);
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	}
	if (!vg_state_terminal(r.state)) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s' has not ended (%s); "
		    "use 'vigil resume %s' or wait for it", r.id,
		    vg_run_display_state(&r), r.id);
		goto out;
	}
	/* Ours before the failed tasks are reset: of two retries started
	 * together, the second stops here. */
	if ((rc = vg_run_claim(st, &r, &e)) != 0) {
		rc = vg_cmd_fail(rc == VG_EAGAIN ? VG_EXIT_USAGE :
		    VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	if ((rc = vg_launch_enter(&r)) != 0 ||
	    (rc = vg_launch_load_run(st, r.id, &m, &ts)) != 0)
		goto out;
	if ((rc = vg_run_reset_failed(st, r.id, &n, &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	if (n == 0) {
		printf("run %s: no failed tasks to retry\n", r.id);
		rc = vg_cmd_finish_stdout(VG_EXIT_OK);
		goto out;
	}
	if (!vg_args_has(a, "quiet") && !vg_args_has(a, "json"))
		fprintf(stderr, "vigil: run %s: retrying %d task%s\n", r.id, n,
		    n == 1 ? "" : "s");
	rc = vg_launch_drive(st, r.id, m, &ts, (int)jobs,
	    vg_args_has(a, "json"), vg_args_has(a, "quiet"));
out:
	vg_run_info_release(&r);
	vg_taskset_release(&ts);
	vg_manifest_free(m);
	vg_store_close(st);
	return rc;
}

const struct vg_cmd_entry vg_cmd_retry = {
	.name = "retry",
	.args_usage = "RUN",
	.summary = "run an ended run's failed tasks again",
	.help = "With --failed: every task of RUN that ended FAILED, TIMEOUT, "
	    "OOM,\nCANCELLED, LOST, NODE_FAIL, PREEMPTED, BOOT_FAIL, "
	    "DEADLINE, BACKEND_ERROR or\nDEPENDENCY_NEVER_SATISFIED runs "
	    "again in the foreground with a fresh\nretry budget, in the "
	    "run's working directory with the environment it was\nmade "
	    "with; SUCCEEDED and DENIED tasks are left alone.",
	.opts = (const struct vg_opt[]){
		{ .name = "failed", .help = "retry the tasks that did not "
		  "succeed (required)" },
		VG_OPT_JOBS,
		VG_OPT_JSON_RUN,
		VG_OPT_QUIET,
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.ids = "runs",
	.exec = cmd_retry_exec,
};

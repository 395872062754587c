/*
 * cmd-notify.c - vigil notify: sends a notification by hand.  With
 * --test FILE, a sample payload (event "test") to the channels of
 * FILE's notify section, telling on stdout how each delivery went;
 * with RUN, the real payload of an ended run again (for a delivery a
 * killed vigil never finished), recorded as events of the run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/notify.h"

/* Prints what happened; returns the exit status for the stats. */
static int
report(const struct vg_strv *said, const struct vg_notify_stats *ns)
{
	size_t i;

	for (i = 0; i < said->n; i++)
		printf("%s\n", said->v[i]);
	printf("%d delivered, %d failed in %.1fs\n", ns->sent, ns->failed,
	    ns->seconds);
	return ns->failed > 0 ? VG_EXIT_FAILED : VG_EXIT_OK;
}

static int
cmd_notify_exec(struct vg_args *a)
{
	struct vg_strv said = VG_STRV_INIT;
	struct vg_notify_stats ns;
	struct vg_run_report rep;
	struct vg_manifest *m = NULL;
	struct vg_taskset ts = { NULL, 0, NULL };
	struct vg_store *st = NULL;
	struct vg_err e;
	int rc, test = vg_args_has(a, "test");

	vg_err_init(&e);
	if (test) {
		if ((rc = vg_launch_load(a->argv[0], vg_args_all(a, "set"),
		    &m, &ts)) != 0)
			return rc;
	} else {
		if ((rc = vg_launch_store(&st, NULL)) != 0)
			return rc;
		if ((rc = vg_run_report_load(st, a->argv[0], &rep, &e)) != 0) {
			rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
			goto out;
		}
		if (!vg_state_terminal(rep.r.state)) {
			rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s' has not ended "
			    "(%s); it notifies when it does", rep.r.id,
			    vg_state_name(rep.r.state));
			vg_run_report_release(&rep);
			goto out;
		}
		if ((rc = vg_launch_load_run(st, rep.r.id, &m, &ts)) != 0) {
			vg_run_report_release(&rep);
			goto out;
		}
	}
	if (!vg_notify_any(&m->notify)) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "%s has no notify channel "
		    "(notify.webhook, notify.email or notify.command)",
		    test ? a->argv[0] : "the run's manifest");
		if (!test)
			vg_run_report_release(&rep);
		goto out;
	}
	if (test)
		vg_run_report_sample(m, &rep);
	vg_notify_deliver(st, m, &rep, 2, &said, NULL, &ns);
	rc = report(&said, &ns);
	vg_run_report_release(&rep);
out:
	vg_strv_release(&said);
	vg_taskset_release(&ts);
	vg_manifest_free(m);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_notify = {
	.name = "notify",
	.args_usage = "--test FILE | RUN",
	.summary = "send a sample notification, or a run's again",
	.help = "With --test FILE, sends a sample payload (event \"test\") to "
	    "every channel\nof FILE's notify section and says how each "
	    "delivery went.  With RUN,\nsends the ended run's notification "
	    "again (recorded as events of the run).\nDeliveries are bounded "
	    "by notify.timeout and notify.total (docs/notify.md).\nExit "
	    "status: 0 all delivered, 1 some failed, 2 usage or manifest "
	    "error.",
	.opts = (const struct vg_opt[]){
		{ .name = "test", .help = "FILE is a manifest: send a sample "
		  "payload" },
		VG_OPT_SET,
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_notify_exec,
};

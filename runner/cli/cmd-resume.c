/*
 * cmd-resume.c - vigil resume RUN: continues a run whose vigil died (kill
 * -9, a reboot, a lost session) in the foreground.  Finished tasks stay
 * finished; attempts that were running are taken over where the
 * scheduler and backend can (a Slurm job, a container, a remote task),
 * else killed and run again without counting against retry.max
 * (docs/state.md).  A run of a concurrency group takes the group's
 * lock for the time it is driven.  The tasks run where the run was made
 * (runner/core/origin.h), whatever the current directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/group.h"

static int
cmd_resume_exec(struct vg_args *a)
{
	struct vg_group g = VG_GROUP_INIT;
	struct vg_group_result gr;
	struct vg_group_req rq;
	struct vg_manifest *m = NULL;
	struct vg_taskset ts = { NULL, 0, NULL };
	struct vg_store *st = NULL;
	struct vg_run_info r;
	struct vg_err e;
	char *home = NULL;
	long jobs;
	int rc;

	if (vg_args_int(a, "jobs", 1, 100000, 0, &jobs) != 0)
		return VG_EXIT_USAGE;
	if ((rc = vg_launch_store(&st, &home)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_store_run_get(st, a->argv[0], &r, &e)) != 0) {
		vg_store_close(st);
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	}
	if (vg_state_terminal(r.state)) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s' already ended (%s); "
		    "'vigil retry %s --failed' runs its failed tasks again",
		    r.id, vg_state_name(r.state), r.id);
		goto out;
	}
	/* Ours before anything of the run is touched: a second resume
	 * (or a retry, a cancel) started at the same moment stops here. */
	if ((rc = vg_run_claim(st, &r, &e)) != 0) {
		rc = vg_cmd_fail(rc == VG_EAGAIN ? VG_EXIT_USAGE :
		    VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	if ((rc = vg_launch_enter(&r)) != 0 ||
	    (rc = vg_launch_load_run(st, r.id, &m, &ts)) != 0)
		goto out;
	if (vg_overlap_parse(m->concurrency.overlap, 0) > VG_OVERLAP_ALLOW) {
		memset(&rq, 0, sizeof(rq));
		rq.home = home;
		rq.name = m->concurrency.group != NULL ? m->concurrency.group :
		    "";
		rq.overlap = VG_OVERLAP_SKIP;
		rq.self = r.id;
		if ((rc = vg_group_acquire(st, &rq, &g, &gr, &e)) != 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
			goto out;
		}
		if (gr.held) {
			rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s': its "
			    "concurrency group '%s' is %s; resume it when that "
			    "ends", r.id, rq.name, gr.why);
			goto out;
		}
	}
	if (!vg_args_has(a, "quiet") && !vg_args_has(a, "json"))
		fprintf(stderr, "vigil: resuming run %s\n", r.id);
	rc = vg_launch_drive(st, r.id, m, &ts, (int)jobs,
	    vg_args_has(a, "json"), vg_args_has(a, "quiet"));
out:
	vg_group_release(&g);
	free(home);
	vg_run_info_release(&r);
	vg_taskset_release(&ts);
	vg_manifest_free(m);
	vg_store_close(st);
	return rc;
}

const struct vg_cmd_entry vg_cmd_resume = {
	.name = "resume",
	.args_usage = "RUN",
	.summary = "continue a run whose vigil died",
	.help = "Drives RUN to its end here, from where its vigil stopped: "
	    "tasks that\nfinished are not run again; attempts that were "
	    "running are killed (their\nexit status is lost) and run again "
	    "without counting against retry.max.\nTasks run in the run's "
	    "working directory with the environment it was made\nwith.",
	.opts = (const struct vg_opt[]){
		VG_OPT_JOBS,
		VG_OPT_JSON_RUN,
		VG_OPT_QUIET,
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.ids = "runs",
	.exec = cmd_resume_exec,
};

/*
 * cmd-status.c - vigil status: show runs, or one run's tasks.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_status_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "status: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_status = {
	.name = "status",
	.args_usage = "[RUN]",
	.summary = "show runs, or one run's tasks",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 0,
	.max_args = 1,
	.exec = cmd_status_exec,
};

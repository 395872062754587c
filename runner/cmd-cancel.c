/*
 * cmd-cancel.c - vigil cancel: cancel a run or one task.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_cancel_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "cancel: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_cancel = {
	.name = "cancel",
	.args_usage = "RUN[/TASK]",
	.summary = "cancel a run or one task",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_cancel_exec,
};

/*
 * cmd-logs.c - vigil logs: print a task's output.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_logs_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "logs: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_logs = {
	.name = "logs",
	.args_usage = "RUN[/TASK]",
	.summary = "print a task's output",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_logs_exec,
};

/*
 * cmd-retry.c - vigil retry: run a finished run's failed tasks again.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_retry_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "retry: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_retry = {
	.name = "retry",
	.args_usage = "RUN",
	.summary = "run a finished run's failed tasks again",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_retry_exec,
};

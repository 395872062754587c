/*
 * cmd-run.c - vigil run: run a manifest here and wait for it.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_run_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "run: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_run = {
	.name = "run",
	.args_usage = "FILE",
	.summary = "run a manifest here and wait for it",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_run_exec,
};

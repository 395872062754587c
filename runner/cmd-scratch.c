/*
 * cmd-scratch.c - vigil scratch: list or clean per-task scratch directories.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_scratch_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "scratch: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_scratch = {
	.name = "scratch",
	.args_usage = "list|gc",
	.summary = "list or clean per-task scratch directories",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_scratch_exec,
};

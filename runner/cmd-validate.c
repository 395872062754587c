/*
 * cmd-validate.c - vigil validate: check a manifest and report every problem.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_validate_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "validate: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_validate = {
	.name = "validate",
	.args_usage = "FILE",
	.summary = "check a manifest and report every problem",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_validate_exec,
};

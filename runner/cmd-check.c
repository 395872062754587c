/*
 * cmd-check.c - vigil check: ask the policy gate about commands.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_check_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "check: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_check = {
	.name = "check",
	.args_usage = "[CMD]",
	.summary = "ask the policy gate about commands",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 0,
	.max_args = -1,
	.exec = cmd_check_exec,
};

/*
 * cmd-submit.c - vigil submit: start a run detached and print its id.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_submit_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "submit: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_submit = {
	.name = "submit",
	.args_usage = "FILE",
	.summary = "start a run detached and print its id",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_submit_exec,
};

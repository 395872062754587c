/*
 * cmd-exec.c - vigil exec: check one command, then run it in a backend.
 * (The run part is written below; see cmd_exec_exec.)
 */
#include "cmd.h"

static int
cmd_exec_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "exec: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_exec = {
	.name = "exec",
	.args_usage = "-- CMD",
	.summary = "check one command, then run it in a backend",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_exec_exec,
};

/*
 * cmd-gc.c - vigil gc: remove leftovers of finished and dead runs.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_gc_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "gc: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_gc = {
	.name = "gc",
	.args_usage = "",
	.summary = "remove leftovers of finished and dead runs",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_gc_exec,
};

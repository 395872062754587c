/*
 * cmd-cache.c - vigil cache: manage the SIF image cache.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_cache_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "cache: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_cache = {
	.name = "cache",
	.args_usage = "list|pull|verify|gc|rm [ARGS]",
	.summary = "manage the SIF image cache",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_cache_exec,
};

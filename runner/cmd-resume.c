/*
 * cmd-resume.c - vigil resume: continue a run whose vigil died.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_resume_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "resume: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_resume = {
	.name = "resume",
	.args_usage = "RUN",
	.summary = "continue a run whose vigil died",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_resume_exec,
};

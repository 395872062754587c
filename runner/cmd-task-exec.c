/*
 * cmd-task-exec.c - vigil task-exec: run one task attempt (used inside Slurm jobs).
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_task_exec_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "task-exec: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_task_exec = {
	.name = "task-exec",
	.args_usage = "RUN_DIR INDEX",
	.summary = "run one task attempt (used inside Slurm jobs)",
	.opts = (const struct vg_opt[]){ { NULL } },
	.hidden = 1,
	.min_args = 2,
	.max_args = 2,
	.exec = cmd_task_exec_exec,
};

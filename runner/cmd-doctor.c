/*
 * cmd-doctor.c - vigil doctor: report what this host can isolate and run.
 * (Placeholder until implemented.)
 */
#include "cmd.h"

static int
cmd_doctor_exec(struct vg_args *a)
{
	(void)a;
	return vg_cmd_fail(VG_EXIT_INTERNAL, "doctor: not implemented yet");
}

const struct vg_cmd_entry vg_cmd_doctor = {
	.name = "doctor",
	.args_usage = "",
	.summary = "report what this host can isolate and run",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_doctor_exec,
};

/*
 * slurm.c - the slurm scheduler.
 * (Placeholder until implemented.)
 */
#include "scheduler.h"

static int
slurm_open(struct vg_sched *s, struct vg_err *e)
{
	(void)s;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "scheduler 'slurm' is not implemented yet");
}

const struct vg_scheduler_ops vg_scheduler_slurm = {
	.name = "slurm",
	.open = slurm_open,
};

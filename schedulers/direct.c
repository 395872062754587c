/*
 * direct.c - the direct scheduler.
 * (Placeholder until implemented.)
 */
#include "scheduler.h"

static int
direct_open(struct vg_sched *s, struct vg_err *e)
{
	(void)s;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "scheduler 'direct' is not implemented yet");
}

const struct vg_scheduler_ops vg_scheduler_direct = {
	.name = "direct",
	.open = direct_open,
};

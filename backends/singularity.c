/*
 * singularity.c - the singularity backend.
 * (Placeholder until implemented.)
 */
#include "backend.h"

static int
singularity_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "backend 'singularity' is not implemented yet");
}

const struct vg_backend_ops vg_backend_singularity = {
	.name = "singularity",
	.run = singularity_run,
};

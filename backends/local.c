/*
 * local.c - the local backend.
 * (Placeholder until implemented.)
 */
#include "backend.h"

static int
local_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "backend 'local' is not implemented yet");
}

const struct vg_backend_ops vg_backend_local = {
	.name = "local",
	.run = local_run,
};

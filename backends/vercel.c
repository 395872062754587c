/*
 * vercel.c - the vercel backend.
 * (Placeholder until implemented.)
 */
#include "backend.h"

static int
vercel_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "backend 'vercel' is not implemented yet");
}

const struct vg_backend_ops vg_backend_vercel = {
	.name = "vercel",
	.run = vercel_run,
};

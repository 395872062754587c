/*
 * modal.c - the modal backend.
 * (Placeholder until implemented.)
 */
#include "backend.h"

static int
modal_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "backend 'modal' is not implemented yet");
}

const struct vg_backend_ops vg_backend_modal = {
	.name = "modal",
	.run = modal_run,
};

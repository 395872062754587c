/*
 * ssh.c - the ssh backend.
 * (Placeholder until implemented.)
 */
#include "backend.h"

static int
ssh_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "backend 'ssh' is not implemented yet");
}

const struct vg_backend_ops vg_backend_ssh = {
	.name = "ssh",
	.run = ssh_run,
};

/*
 * docker.c - the docker backend.
 * (Placeholder until implemented.)
 */
#include "backend.h"

static int
docker_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED,
	    "backend 'docker' is not implemented yet");
}

const struct vg_backend_ops vg_backend_docker = {
	.name = "docker",
	.run = docker_run,
};

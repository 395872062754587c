/*
 * backend.c - the table of backends, lookup by name, and the wrappers
 * around optional operations.
 */
#include <string.h>

#include "backend.h"

const struct vg_backend_ops *const vg_backends[] = {
	&vg_backend_local,
	&vg_backend_docker,
	&vg_backend_ssh,
	&vg_backend_singularity,
	&vg_backend_modal,
	&vg_backend_daytona,
	&vg_backend_vercel,
	NULL
};

const struct vg_backend_ops *
vg_backend_find(const char *name)
{
	const struct vg_backend_ops *const *b;

	if (strcmp(name, "apptainer") == 0)
		name = "singularity";
	for (b = vg_backends; *b != NULL; b++)
		if (strcmp((*b)->name, name) == 0)
			return *b;
	return NULL;
}

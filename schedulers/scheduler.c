/*
 * scheduler.c - the table of schedulers and lookup by name.
 */
#include <string.h>

#include "schedulers/scheduler.h"

const struct vg_scheduler_ops *const vg_schedulers[] = {
	&vg_scheduler_direct,
	&vg_scheduler_slurm,
	NULL
};

const struct vg_scheduler_ops *
vg_scheduler_find(const char *name)
{
	const struct vg_scheduler_ops *const *s;

	for (s = vg_schedulers; *s != NULL; s++)
		if (strcmp((*s)->name, name) == 0)
			return *s;
	return NULL;
}

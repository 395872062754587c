/*
 * plugins.c - the list of plugins the manifest floor reads
 * (runner/manifest/plugin.h): every backend of vg_backends[], then every
 * scheduler of vg_schedulers[].  The one place that knows both tables;
 * adding a backend or scheduler needs no line here.
 */
#include <stddef.h>

#include "backends/backend.h"
#include "schedulers/scheduler.h"

const struct vg_plugin *
vg_plugin_at(size_t i)
{
	size_t n;

	for (n = 0; vg_backends[n] != NULL; n++)
		if (n == i)
			return &vg_backends[n]->p;
	i -= n;
	for (n = 0; vg_schedulers[n] != NULL; n++)
		if (n == i)
			return &vg_schedulers[n]->p;
	return NULL;
}

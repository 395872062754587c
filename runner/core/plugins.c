/*
 * plugins.c - the list of plugins the manifest floor reads
 * (runner/manifest/plugin.h): every backend of vg_backends[], then every
 * scheduler of vg_schedulers[], registered with vg_plugins_set; and the
 * schedulers' commands for the gate (pl_register_progs), and the
 * allocation vigil runs in for the pool (vg_pool_alloc_source).  The one
 * place that knows both tables; adding a backend or scheduler needs no
 * line here.
 */
#include <stddef.h>

#include "backends/backend.h"
#include "runner/core/plugins.h"
#include "runner/manifest/plugin.h"
#include "schedulers/scheduler.h"

/* Room for every backend and scheduler, and the NULL after them. */
#define MAX_PLUGINS	64

/* vg_pool_alloc_source: the first scheduler whose job this process
 * runs in says what the allocation holds. */
static int
plugins_allocation(struct vg_alloc *a)
{
	size_t i;

	for (i = 0; vg_schedulers[i] != NULL; i++)
		if (vg_schedulers[i]->allocation != NULL &&
		    vg_schedulers[i]->allocation(a) == 1)
			return 1;
	return 0;
}

void
vg_plugins_init(void)
{
	static const struct vg_plugin *list[MAX_PLUGINS + 1];
	size_t n = 0, i;

	if (list[0] != NULL)
		return;
	for (i = 0; vg_backends[i] != NULL && n < MAX_PLUGINS; i++)
		list[n++] = &vg_backends[i]->p;
	for (i = 0; vg_schedulers[i] != NULL && n < MAX_PLUGINS; i++) {
		list[n++] = &vg_schedulers[i]->p;
		if (vg_schedulers[i]->policy_progs != NULL)
			pl_register_progs(vg_schedulers[i]->policy_progs);
	}
	list[n] = NULL;
	vg_plugins_set(list);
	vg_pool_alloc_source(plugins_allocation);
}

/*
 * plugins-init.c - every unit test program registers vigil's backends and
 * schedulers with the manifest floor at start, as vigil's own main does
 * (runner/cli/cmd.c), before its tests read a manifest.
 */
#include "runner/core/plugins.h"

static void __attribute__((constructor))
plugins_at_start(void)
{
	vg_plugins_init();
}

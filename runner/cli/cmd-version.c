/*
 * cmd-version.c - vigil version: the version and what was compiled in.
 */
#include <stdio.h>

#include "backends/backend.h"
#include "schedulers/scheduler.h"
#include "runner/cli/cmd.h"
#include "common/version.h"

static int
cmd_version_exec(struct vg_args *a)
{
	const struct vg_backend_ops *const *b;
	const struct vg_scheduler_ops *const *s;

	(void)a;
	printf("vigil %s\nschedulers:", VG_VERSION);
	for (s = vg_schedulers; *s != NULL; s++)
		printf(" %s", (*s)->p.name);
	printf("\nbackends:");
	for (b = vg_backends; *b != NULL; b++)
		printf(" %s", (*b)->p.name);
	printf("\n");
	return VG_EXIT_OK;
}

const struct vg_cmd_entry vg_cmd_version = {
	.name = "version",
	.summary = "print vigil's version and compiled-in backends",
	.opts = (const struct vg_opt[]){ { NULL } },
	.max_args = 0,
	.exec = cmd_version_exec,
};

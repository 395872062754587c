/*
 * cmd-config.c - configuration for commands without a manifest; see
 * cmd-config.h.  Printing belongs here, in the command layer: the loader
 * itself (config.c) only returns diagnostics.
 */
#include <stdio.h>

#include "runner/cli/cmd-config.h"
#include "runner/cli/cmd.h"
#include "runner/manifest/manifest-int.h"

int
vg_cmd_load_config(struct vg_manifest **out)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_err e;
	size_t i;
	int rc;

	vg_err_init(&e);
	rc = vg_config_load_defaults(NULL, out, &diag, &e);
	if (rc == 0) {
		vg_diag_release(&diag);
		return 0;
	}
	for (i = 0; i < diag.lines.n; i++)
		fprintf(stderr, "vigil: %s\n", diag.lines.v[i]);
	if (diag.lines.n == 0)
		fprintf(stderr, "vigil: %s\n", e.msg);
	vg_diag_release(&diag);
	return vg_cmd_exit_for_rc(rc);
}

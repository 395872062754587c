/*
 * cmd-config.h - the settings of commands that work without a manifest
 * (`vigil cache`, `vigil scratch`): the built-in defaults under the site
 * and user configuration, as a run would see them.
 */
#ifndef VG_CMD_CONFIG_H
#define VG_CMD_CONFIG_H

#include "runner/manifest/manifest.h"

/*
 * Loads the configuration layers ($VIGIL_SITE_CONFIG or
 * /etc/vigil/config.yaml, then $VIGIL_USER_CONFIG or
 * ~/.config/vigil/config.yaml) into *out (caller frees with
 * vg_manifest_free).  Returns 0, or the exit status after printing every
 * problem on stderr (a bad config file is a usage error, 2).
 */
int	vg_cmd_load_config(struct vg_manifest **out);

#endif

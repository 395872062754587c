/*
 * ssh.h - the ssh backend's manifest section.  The backend itself is
 * vg_backend_ssh (backend.h); remote command text is ssh-remote.h.
 */
#ifndef VG_SSH_H
#define VG_SSH_H

#include "runner/manifest/manifest.h"
#include "runner/manifest/plugin.h"

struct vg_ssh_conf {
	char		*host;
	int		 port;		/* default 22 */
	char		*user;
	char		*identity;
	char		*known_hosts;
	char		*host_key;	/* "strict" (default) | "accept-new" */
	char		*proxy_jump;
	int		 keepalive;	/* seconds, default 15 */
	int		 connect_timeout; /* seconds, default 10 */
	char		*remote_dir;	/* default ~/.vigil/runs */
	struct vg_strv	 stage_in;	/* local paths copied before start */
	struct vg_strv	 stage_out;	/* remote paths copied after end */
	struct vg_strv	 gpus;		/* the remote host's GPU ids */
};

/* The ssh: section (owned by the ssh backend). */
extern const struct vg_msection vg_ssh_msection;

/* The ssh section of m (defaulted; owned by m). */
static inline struct vg_ssh_conf *
vg_ssh_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_ssh_msection);
}

#endif

/*
 * host-access.h - the verdict on host access that a container backend
 * found in a task's configuration: binds of host paths or system trees,
 * container engine sockets, host namespaces, devices, privileges.  The
 * shell analysis never reports such findings (they are not in the
 * command); the backend that sees them asks here, and the policy's rules
 * decide, so that every backend judges host access the same way.
 *
 * The verdict is pure: it prints, blocks and allocates nothing.  The site
 * facts (vg_policy_host_site) are read from the site policy file.
 */
#ifndef VG_POLICY_HOST_ACCESS_H
#define VG_POLICY_HOST_ACCESS_H

#include "common/err.h"
#include "runner/manifest/manifest.h"

struct vg_host_verdict {
	int		 allowed;	/* the access may go ahead */
	const char	*rule;		/* id of the allow rule that let it
					 * through (borrowed from conf), or
					 * NULL */
	char		 reason[VG_ERR_MSG_MAX];	/* one line */
};

/*
 * Judges the host access described by findings (one line per finding,
 * the first one being the one to name; NULL or "" when there is none)
 * under the manifest's policy section conf (may be NULL) and fills v.
 *
 * With path NULL the findings are about the container as a whole: policy
 * mode auto-approve lets them through, and so does any allow rule of
 * category host-access.  With path set (the resolved host path of one
 * bind), only an allow rule of category host-access whose match glob
 * matches path (fnmatch(3), '*' crosses '/') lets it through; the mode
 * does not, since the manifest itself names the path.
 *
 * When refused, reason is the first finding, " (and more)" when there
 * are several (path NULL only), and which rule would allow it.  When
 * allowed, reason says by what.  Returns 0, or VG_EINVAL when v is NULL.
 */
int	vg_policy_host_access(const struct vg_policy_conf *conf,
	    const char *findings, const char *path,
	    struct vg_host_verdict *v);

/*
 * What the site policy file says about host access, read where the
 * attempt runs: the docker volume drivers it lists as safe
 * (safe_volume_drivers: a list of {driver, reason}).  A volume of a
 * listed driver is not host access, whatever its options; every other
 * driver but 'local' (judged by its options) is.
 */
struct vg_host_site {
	char		*file;		/* the file read; NULL when none */
	struct vg_strv	 drivers;	/* driver names */
	struct vg_strv	 reasons;	/* reasons[i] for drivers[i] */
};

/*
 * Reads the site policy file (conf->file, else /etc/vigil/policy.yaml; a
 * missing default file is an empty site) into s.  A file that cannot be
 * read or parsed fails (VG_ENOENT, VG_EIO, VG_EINVAL with the first
 * FILE:LINE:COL problem in e), so that nothing is judged without it.
 */
int	vg_policy_host_site(const struct vg_policy_conf *conf,
	    struct vg_host_site *s, struct vg_err *e);
/* The same from text held in memory; file names it in messages. */
int	vg_policy_host_site_text(const char *file, const char *text,
	    size_t len, struct vg_host_site *s, struct vg_err *e);
/* The site's reason when it lists driver as safe, else NULL. */
const char *vg_policy_safe_driver(const struct vg_host_site *s,
	    const char *driver);
void	vg_policy_host_site_release(struct vg_host_site *s);

#endif

/*
 * host-access.h - the verdict on host access that a container backend
 * found in a task's configuration: binds of host paths or system trees,
 * container engine sockets, host namespaces, devices, privileges.  The
 * shell analysis never reports such findings (they are not in the
 * command); the backend that sees them asks here, and the policy's rules
 * decide, so that every backend judges host access the same way.
 *
 * Pure: nothing here prints, blocks or allocates.
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

#endif

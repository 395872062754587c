/*
 * diag.h - source locations and lists of diagnostics, for everything
 * that reports problems in a file a user wrote (manifests, configs,
 * policy files): "FILE:LINE:COL: message", every problem at once.
 */
#ifndef VG_DIAG_H
#define VG_DIAG_H

#include "common/buf.h"

/* A position in a manifest or config file (1-based line and column). */
struct vg_loc {
	const char	*file;		/* borrowed from the manifest */
	int		 line;
	int		 col;
};

/*
 * A list of diagnostics: validation reports every problem at once.  Each
 * line is "FILE:LINE:COL: message" (or "FILE: message" without a place).
 */
struct vg_diag {
	struct vg_strv	lines;
};

void	vg_diag_add(struct vg_diag *d, const struct vg_loc *loc,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void	vg_diag_release(struct vg_diag *d);

#endif

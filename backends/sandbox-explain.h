/*
 * sandbox-explain.h - why a task failed, when the sandbox refused it
 * something (see sandbox-explain.c for how it is told).
 */
#ifndef VG_SANDBOX_EXPLAIN_H
#define VG_SANDBOX_EXPLAIN_H

#include <stddef.h>

#include "common/buf.h"

/* What the task was given, all paths absolute (NULL: none). */
struct vg_explain_in {
	const char		*level;		/* "standard", "strict" */
	int			 strict;
	int			 network;	/* the task has the host's network */
	const char		*task_dir;
	const char		*scratch_dir;
	const char		*tmp_dir;
	const char		*workdir;	/* the task's working dir */
	int			 workdir_writable;
	const char *const	*protected;	/* names kept read-only */
	size_t			 nprotected;
	const char *const	*writable;	/* isolation.writable, /dev */
	size_t			 nwritable;
	const char *const	*readable;	/* strict: system trees and
						   isolation.readable */
	size_t			 nreadable;
	const char		*where;		/* "m.yaml:4:1" of the
						   isolation section, or NULL */
};

/*
 * Reads the tail of a failed task's stderr (text, len) for a refusal the
 * sandbox is the cause of; appends to out which path, which isolation
 * level and the manifest setting that would allow it, and returns 1;
 * 0 when none is found.
 */
int	vg_sandbox_explain(const struct vg_explain_in *in, const char *text,
	    size_t len, struct vg_buf *out);

#endif

/*
 * audit.h - what the audit file writer (audit.c) offers the entry
 * points in policy.c: appending one decision record as a JSON line.
 * Redaction of the command text is public (vg_policy_redact).
 */
#ifndef VG_POLICY_AUDIT_H
#define VG_POLICY_AUDIT_H

#include "common/err.h"
#include "runner/policy/policy.h"

/* Appends r as one JSON line to the file at path with one write(2), so
 * concurrent writers do not interleave.  Blocks on the write. */
int	pl_audit_append(const char *path, const struct vg_audit_rec *r,
	    struct vg_err *e);
/* Appends r as one JSON line to b (the line pl_audit_append writes). */
void	pl_audit_line(struct vg_buf *b, const struct vg_audit_rec *r);
/* Writes the complete lines in b to path with one write(2) (O_APPEND:
 * whole lines of concurrent writers never interleave), *fd caching the
 * open file (-1 = not open yet).  Empties b. */
int	pl_audit_write(const char *path, int *fd, struct vg_buf *b,
	    struct vg_err *e);

#endif

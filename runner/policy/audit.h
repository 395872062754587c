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

#endif

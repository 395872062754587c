/*
 * after.h - the runs a run waits for (the manifest's after: field,
 * after.c), and their conditions.
 */
#ifndef VG_AFTER_H
#define VG_AFTER_H

#include "runner/manifest/manifest.h"

struct vg_field_ops;

/* Names of enum vg_after_cond, NULL-terminated ("ok", "any", "notok"). */
extern const char *const vg_after_cond_names[];

/* Parses a condition name; -1 when unknown. */
int	vg_after_cond_parse(const char *s);

/*
 * Adds the runs of spec, "RUN[:COND][,RUN[:COND]...]" (COND ok, any or
 * notok; ok when left out), to a with place loc (may be NULL).  Returns
 * 0, or -1 with why filled and a unchanged from the bad entry on.
 */
int	vg_after_add(struct vg_afters *a, const char *spec,
	    const struct vg_loc *loc, char *why, size_t n);

/* Decoder, encoder and release of the after: field (VG_F_CUSTOM). */
extern const struct vg_field_ops vg_after_ops;

#endif

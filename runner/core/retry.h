/*
 * retry.h - whether an attempt that ended is tried again (retry.on,
 * retry.max) and after how long (retry.backoff): one answer for the run
 * driver (runner/core/run.c) and for a pack's vigil (pack-exec), which
 * offers to run a packed task's retry inside its pack.
 */
#ifndef VG_CORE_RETRY_H
#define VG_CORE_RETRY_H

#include "common/state.h"
#include "runner/manifest/manifest.h"

/* The retry.on bit that covers state st (of a backend failure with
 * cause); 0 when such an end is never retried. */
unsigned	vg_retry_bit(enum vg_state st, int cause);

/*
 * Whether an attempt ending in st (cause) is tried again under r, tries
 * being the attempts counted against retry.max so far, this one
 * included.  retry.on empty covers every retried state.
 */
int		vg_retry_wanted(const struct vg_retry *r, enum vg_state st,
		    int cause, int tries);

/* Seconds before the next attempt after tries counted attempts. */
double		vg_retry_backoff(const struct vg_retry *r, int tries);

#endif

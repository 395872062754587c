/*
 * local.h - what the local backend offers beyond its ops (backend.h):
 * the isolation downgrades of a manifest on this host, for the run's
 * events, `vigil status` and `vigil doctor`.
 */
#ifndef VG_LOCAL_H
#define VG_LOCAL_H

#include "../runner/err.h"
#include "../runner/manifest.h"

/*
 * Returns "" when m's isolation level is delivered in full here, else a
 * "; "-separated list of what is missing and what runs instead.  The
 * string is borrowed and valid until the next call.  NULL with e set when
 * the level is refused (isolation.required) or cannot be built.
 */
const char *vg_local_downgrades(const struct vg_manifest *m, struct vg_err *e);

/* Drops the compiled sandbox kept between attempts (tests, valgrind). */
void	vg_local_reset(void);

#endif

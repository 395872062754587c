/*
 * caps.h - Linux capability names (capabilities(7)), for the manifest's
 * isolation.capabilities: the few powers of root a local task may keep
 * when a host-access rule of the policy allows it (backends/sandbox.c
 * drops every other).  Pure: a table and lookups.
 */
#ifndef VG_CAPS_H
#define VG_CAPS_H

#include <stdint.h>

#include "common/buf.h"

/*
 * The number of capability name (case-insensitive, with or without the
 * "CAP_" prefix: "net_bind_service", "CAP_NET_RAW"), or -1 when it is
 * not one.
 */
int	vg_cap_number(const char *name);

/* The lowercase name of capability number c, without "cap_"; "?" when
 * there is none. */
const char *vg_cap_name(int c);

/*
 * Sets *mask to the bits (1 << number) of the names in v.  Returns 0, or
 * -1 with *bad pointing at the first name that is not a capability.
 */
int	vg_cap_mask(const struct vg_strv *v, uint64_t *mask,
	    const char **bad);

/* Appends the valid names, ", "-separated, to out (for messages). */
void	vg_cap_list(struct vg_buf *out);

/* Appends the names of mask's bits, ","-separated, or "none" for 0. */
void	vg_cap_names(uint64_t mask, struct vg_buf *out);

#endif

/*
 * evict.h - which cached images to remove: those the site purge will take
 * soon (purge-aligned expiry), then the least recently used until the
 * quota in bytes and entries holds.  Pinned images (leases of running
 * tasks) are never chosen.
 *
 * A pure function over an array, so that the plan for 100,000 entries is
 * a sort and a scan; gathering the array (readdir and stat) and acting on
 * the plan is cache.c's job.
 */
#ifndef VG_EVICT_H
#define VG_EVICT_H

#include <stddef.h>
#include <stdint.h>

#include "sif-cache/cache.h"

struct vg_evict_item {
	double			 last_use;	/* LRU key */
	double			 purge_at;	/* or INFINITY */
	uint64_t		 size;
	int			 pinned;
	int			 missing;	/* record without image */
	enum vg_cache_evict_why	 why;		/* out */
};

/*
 * Fills why for each item: MISSING for records without images, PURGE for
 * unpinned images eligible for purge before now + margin, QUOTA for the
 * least recently used unpinned images while the rest exceeds quota_bytes
 * or quota_entries (0 = no limit), KEEP otherwise.  Fills st (entries,
 * bytes, removed, freed, pinned, over_quota).  Allocates a sort index;
 * returns VG_ENOMEM only if that fails.
 */
int	vg_evict_plan(struct vg_evict_item *v, size_t n,
	    uint64_t quota_bytes, uint64_t quota_entries, double now,
	    double margin, struct vg_cache_gc_stats *st, struct vg_err *e);

#endif

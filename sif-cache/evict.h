/*
 * evict.h - which cached images to remove: those the site purge will take
 * soon (purge-aligned expiry), then the least recently used until the
 * quota in bytes and entries holds.  Pinned images (leases of running
 * tasks) are never chosen.
 *
 * Pure functions over arrays, so that the plan for 100,000 entries is a
 * scan and a selection of the oldest (no full sort); gathering the arrays
 * (readdir, records, stat) and acting on the plan is gc.c's job.
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
 * bytes, removed, freed, pinned, over_quota).  Allocates a key per quota
 * candidate; returns VG_ENOMEM only if that fails.
 */
int	vg_evict_plan(struct vg_evict_item *v, size_t n,
	    uint64_t quota_bytes, uint64_t quota_entries, double now,
	    double margin, struct vg_cache_gc_stats *st, struct vg_err *e);

/*
 * The first step of the plan for one entry: MISSING, PURGE, or KEEP for
 * an image that stays unless the quota takes it (pinned ones always
 * stay).
 */
enum vg_cache_evict_why vg_evict_classify(int missing, int pinned,
	    double purge_at, double now, double margin);

/* A candidate of the quota step: an unpinned image not being purged. */
struct vg_evict_key {
	double		 last_use;	/* LRU key; NaN counts as oldest */
	uint64_t	 size;
	size_t		 pos;		/* the caller's index; breaks ties */
};

/*
 * The quota step: with bytes and count the totals of the images that
 * stay after the purge step (pinned ones included), moves the least
 * recently used keys (by last_use, then pos) that must go for the rest to
 * fit quota_bytes and quota_entries (0 = no limit) to the front of k, in
 * no particular order, and returns how many they are: the fewest that
 * suffice.  *over is set when even removing every key does not suffice
 * (pinned images keep the cache over its quota).  Selection, not a sort:
 * linear time expected, no allocation.
 */
size_t	vg_evict_select(struct vg_evict_key *k, size_t n, uint64_t bytes,
	    uint64_t count, uint64_t quota_bytes, uint64_t quota_entries,
	    int *over);

#endif

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

/*
 * A candidate of the quota step (an unpinned image not being purged), in
 * the caller's order, which breaks ties of last_use (gc: digest order).
 */
struct vg_evict_key {
	double		 last_use;	/* LRU key; NaN counts as oldest */
	uint64_t	 size;
};

/*
 * Where the quota step cuts the candidates: those used before last_use
 * go, and of those used exactly at last_use, the first ties in order.
 */
struct vg_evict_cut {
	double		 last_use;
	size_t		 ties;
	size_t		 n;		/* how many go in all */
};

/*
 * The quota step: with bytes and count the totals of the images that
 * stay after the purge step (pinned ones included), finds the fewest
 * least recently used keys (by last_use, then order) whose removal makes
 * the rest fit quota_bytes and quota_entries (0 = no limit), and fills
 * *cut to name them.  *over is set when even removing every key does not
 * suffice (pinned images keep the cache over its quota).  Normalises
 * last_use in k (NaN to -INFINITY, -0 to 0), which vg_evict_goes then
 * reads; does not reorder k or allocate.  A radix selection over the
 * bits of last_use: eight linear passes, no sort.
 */
void	vg_evict_select(struct vg_evict_key *k, size_t n, uint64_t bytes,
	    uint64_t count, uint64_t quota_bytes, uint64_t quota_entries,
	    struct vg_evict_cut *cut, int *over);

/*
 * Whether the next key in order, used at last_use, goes; *ties_left
 * starts at cut->ties and is consumed by the keys used at the cut.
 */
static inline int
vg_evict_goes(const struct vg_evict_cut *cut, double last_use,
    size_t *ties_left)
{
	if (last_use < cut->last_use)
		return 1;
	if (last_use == cut->last_use && *ties_left > 0) {
		(*ties_left)--;
		return 1;
	}
	return 0;
}

#endif

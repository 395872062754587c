/*
 * evict.c - the eviction plan: purge-aligned expiry, then LRU to quota.
 */
#include <stdlib.h>
#include <string.h>

#include "sif-cache/evict.h"

/* Orders indices into v by last use, oldest first; ties by index. */
static int
by_last_use(const void *a, const void *b, void *arg)
{
	const struct vg_evict_item *v = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = v[i].last_use, y = v[j].last_use;

	if (x < y)
		return -1;
	if (x > y)
		return 1;
	return i < j ? -1 : i > j;
}

int
vg_evict_plan(struct vg_evict_item *v, size_t n, uint64_t quota_bytes,
    uint64_t quota_entries, double now, double margin,
    struct vg_cache_gc_stats *st, struct vg_err *e)
{
	uint64_t bytes = 0, count = 0;
	size_t *idx, ncand = 0, i;

	memset(st, 0, sizeof(*st));
	idx = malloc((n > 0 ? n : 1) * sizeof(*idx));
	if (idx == NULL)
		return vg_err_set(e, VG_ENOMEM, "out of memory planning gc");
	for (i = 0; i < n; i++) {
		v[i].why = VG_EVICT_KEEP;
		if (v[i].missing) {
			v[i].why = VG_EVICT_MISSING;
			st->removed++;
			continue;
		}
		st->entries++;
		st->bytes += v[i].size;
		if (v[i].pinned) {
			st->pinned++;
		} else if (v[i].purge_at <= now + margin) {
			v[i].why = VG_EVICT_PURGE;
			st->removed++;
			st->freed += v[i].size;
			continue;
		} else {
			idx[ncand++] = i;
		}
		bytes += v[i].size;
		count++;
	}
	if ((quota_bytes > 0 && bytes > quota_bytes) ||
	    (quota_entries > 0 && count > quota_entries)) {
		qsort_r(idx, ncand, sizeof(*idx), by_last_use, v);
		for (i = 0; i < ncand; i++) {
			if (!((quota_bytes > 0 && bytes > quota_bytes) ||
			    (quota_entries > 0 && count > quota_entries)))
				break;
			v[idx[i]].why = VG_EVICT_QUOTA;
			bytes -= v[idx[i]].size;
			count--;
			st->removed++;
			st->freed += v[idx[i]].size;
		}
		st->over_quota = (quota_bytes > 0 && bytes > quota_bytes) ||
		    (quota_entries > 0 && count > quota_entries);
	}
	free(idx);
	return 0;
}

/*
 * evict.c - the eviction plan: purge-aligned expiry, then LRU to quota.
 *
 * The quota step needs only the set of the oldest candidates that must
 * go, not their order, so it is a selection (quickselect weighted by
 * size) rather than a sort of every candidate: over 100,000 images that
 * is a few linear passes instead of 1.7 million comparisons through an
 * index.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sif-cache/evict.h"

/* Below this many keys a range is sorted by insertion. */
#define SMALL		16

enum vg_cache_evict_why
vg_evict_classify(int missing, int pinned, double purge_at, double now,
    double margin)
{
	if (missing)
		return VG_EVICT_MISSING;
	if (!pinned && purge_at <= now + margin)
		return VG_EVICT_PURGE;
	return VG_EVICT_KEEP;
}

/* Whether a is less recently used than b (ties by position). */
static inline int
older(const struct vg_evict_key *a, const struct vg_evict_key *b)
{
	return a->last_use < b->last_use || (a->last_use == b->last_use &&
	    a->pos < b->pos);
}

/* Orders keys by age for qsort. */
static int
by_age(const void *a, const void *b)
{
	const struct vg_evict_key *x = a, *y = b;

	return older(x, y) ? -1 : older(y, x);
}

/* Swaps two keys. */
static inline void
swap(struct vg_evict_key *a, struct vg_evict_key *b)
{
	struct vg_evict_key t = *a;

	*a = *b;
	*b = t;
}

/*
 * Partitions k[lo..hi) (hi - lo >= 3) around the median of its first,
 * middle and last keys; returns the pivot's final index, with the older
 * keys before it and their total size in *sum.
 */
static size_t
partition(struct vg_evict_key *k, size_t lo, size_t hi, uint64_t *sum)
{
	size_t mid = lo + (hi - lo) / 2, i, store;
	struct vg_evict_key pivot;
	uint64_t s = 0;

	if (older(&k[mid], &k[lo]))
		swap(&k[mid], &k[lo]);
	if (older(&k[hi - 1], &k[lo]))
		swap(&k[hi - 1], &k[lo]);
	if (older(&k[hi - 1], &k[mid]))
		swap(&k[hi - 1], &k[mid]);
	/* median now at mid: park it at the end */
	swap(&k[mid], &k[hi - 1]);
	pivot = k[hi - 1];
	for (i = store = lo; i < hi - 1; i++) {
		if (older(&k[i], &pivot)) {
			s += k[i].size;
			if (i != store)
				swap(&k[i], &k[store]);
			store++;
		}
	}
	swap(&k[store], &k[hi - 1]);
	*sum = s;
	return store;
}

/* a - b, or 0 when b >= a. */
static inline uint64_t
sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

size_t
vg_evict_select(struct vg_evict_key *k, size_t n, uint64_t bytes,
    uint64_t count, uint64_t quota_bytes, uint64_t quota_entries, int *over)
{
	uint64_t need_b, need_c, total = 0, sum;
	size_t lo = 0, hi = n, p, i, j;
	int depth = 0;

	*over = 0;
	need_b = quota_bytes > 0 ? sub0(bytes, quota_bytes) : 0;
	need_c = quota_entries > 0 ? sub0(count, quota_entries) : 0;
	if (need_b == 0 && need_c == 0)
		return 0;
	for (i = 0; i < n; i++) {
		/* NaN compares with nothing: make it the oldest */
		if (isnan(k[i].last_use))
			k[i].last_use = -INFINITY;
		total += k[i].size;
	}
	if (total < need_b || n < need_c) {
		*over = 1;
		return n;
	}
	/*
	 * Invariant: k[0..lo) must go, k[lo..hi) holds the answer's end,
	 * k[hi..n) stays; need_b and need_c are what k[lo..hi) still owes.
	 * Past 2 log2(n) rounds of bad pivots the range is sorted instead.
	 */
	for (i = n; i > 1; i >>= 1)
		depth += 2;
	while (hi - lo > SMALL) {
		if (depth-- == 0) {
			qsort(k + lo, hi - lo, sizeof(*k), by_age);
			break;
		}
		p = partition(k, lo, hi, &sum);
		if (sum >= need_b && p - lo >= need_c) {
			hi = p;
			continue;
		}
		need_b = sub0(need_b, sum + k[p].size);
		need_c = sub0(need_c, p - lo + 1);
		lo = p + 1;
		if (need_b == 0 && need_c == 0)
			return lo;
	}
	if (depth >= 0) {
		/* insertion sort of the small rest */
		for (i = lo + 1; i < hi; i++)
			for (j = i; j > lo && older(&k[j], &k[j - 1]); j--)
				swap(&k[j], &k[j - 1]);
	}
	for (i = lo; i < hi && (need_b > 0 || need_c > 0); i++) {
		need_b = sub0(need_b, k[i].size);
		need_c = sub0(need_c, 1);
	}
	return i;
}

int
vg_evict_plan(struct vg_evict_item *v, size_t n, uint64_t quota_bytes,
    uint64_t quota_entries, double now, double margin,
    struct vg_cache_gc_stats *st, struct vg_err *e)
{
	struct vg_evict_key *k;
	uint64_t bytes = 0, count = 0;
	size_t nk = 0, i, nout;

	memset(st, 0, sizeof(*st));
	k = malloc((n > 0 ? n : 1) * sizeof(*k));
	if (k == NULL)
		return vg_err_set(e, VG_ENOMEM, "out of memory planning gc");
	for (i = 0; i < n; i++) {
		v[i].why = vg_evict_classify(v[i].missing, v[i].pinned,
		    v[i].purge_at, now, margin);
		if (v[i].why == VG_EVICT_MISSING) {
			st->removed++;
			continue;
		}
		st->entries++;
		st->bytes += v[i].size;
		if (v[i].why == VG_EVICT_PURGE) {
			st->removed++;
			st->freed += v[i].size;
			continue;
		}
		if (v[i].pinned)
			st->pinned++;
		else
			k[nk++] = (struct vg_evict_key){ .last_use =
			    v[i].last_use, .size = v[i].size, .pos = i };
		bytes += v[i].size;
		count++;
	}
	nout = vg_evict_select(k, nk, bytes, count, quota_bytes,
	    quota_entries, &st->over_quota);
	for (i = 0; i < nout; i++) {
		v[k[i].pos].why = VG_EVICT_QUOTA;
		st->removed++;
		st->freed += k[i].size;
	}
	free(k);
	return 0;
}

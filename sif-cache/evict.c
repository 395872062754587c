/*
 * evict.c - the eviction plan: purge-aligned expiry, then LRU to quota.
 *
 * The quota step needs only the set of the oldest candidates that must
 * go, not their order, so it is a selection rather than a sort: a radix
 * selection over the bits of last_use (a double whose bits, suitably
 * flipped, order like the value), one byte per pass, each pass keeping
 * only the keys that match the bytes chosen so far.  Over 100,000
 * candidates that is eight passes over 1.6 MB in place, where a sort
 * would move or index every key.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sif-cache/evict.h"

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

/* The bits of d as an unsigned integer that orders like d (not NaN). */
static inline uint64_t
order_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

/* The inverse of order_bits. */
static inline double
from_order_bits(uint64_t v)
{
	uint64_t u = (v >> 63) ? v & ~(UINT64_C(1) << 63) : ~v;
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* a - b, or 0 when b >= a. */
static inline uint64_t
sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void
vg_evict_select(struct vg_evict_key *k, size_t n, uint64_t bytes,
    uint64_t count, uint64_t quota_bytes, uint64_t quota_entries,
    struct vg_evict_cut *cut, int *over)
{
	uint64_t need_b, need_c, total = 0, prefix = 0, mask = 0, u;
	uint64_t sum[256];
	size_t cnt[256], i, taken = 0;
	int shift, g;
	double at;

	*over = 0;
	cut->last_use = -INFINITY;
	cut->ties = cut->n = 0;
	need_b = quota_bytes > 0 ? sub0(bytes, quota_bytes) : 0;
	need_c = quota_entries > 0 ? sub0(count, quota_entries) : 0;
	if (need_b == 0 && need_c == 0)
		return;
	for (i = 0; i < n; i++) {
		/* NaN compares with nothing: make it the oldest */
		if (isnan(k[i].last_use))
			k[i].last_use = -INFINITY;
		else if (k[i].last_use == 0)
			k[i].last_use = 0;	/* -0 and 0 are one time */
		total += k[i].size;
	}
	if (total < need_b || n < need_c) {
		*over = 1;
		cut->last_use = INFINITY;
		cut->ties = cut->n = n;
		return;
	}
	/*
	 * Each pass narrows the cut to one value of the next byte: the
	 * first bucket, in order, that can pay what the earlier ones left.
	 * Some bucket always can, since all the keys together can.
	 */
	for (shift = 56; shift >= 0; shift -= 8) {
		memset(cnt, 0, sizeof(cnt));
		memset(sum, 0, sizeof(sum));
		for (i = 0; i < n; i++) {
			u = order_bits(k[i].last_use);
			if ((u & mask) != prefix)
				continue;
			g = (int)(u >> shift) & 255;
			cnt[g]++;
			sum[g] += k[i].size;
		}
		for (g = 0; g < 255; g++) {
			if (sum[g] >= need_b && cnt[g] >= need_c)
				break;
			need_b = sub0(need_b, sum[g]);
			need_c = sub0(need_c, cnt[g]);
			taken += cnt[g];
		}
		prefix |= (uint64_t)g << shift;
		mask |= UINT64_C(255) << shift;
	}
	/* the keys used exactly at the cut go in order until paid */
	at = from_order_bits(prefix);
	for (i = 0; i < n && (need_b > 0 || need_c > 0); i++) {
		if (k[i].last_use != at)
			continue;
		need_b = sub0(need_b, k[i].size);
		need_c = sub0(need_c, 1);
		cut->ties++;
	}
	cut->last_use = at;
	cut->n = taken + cut->ties;
}

int
vg_evict_plan(struct vg_evict_item *v, size_t n, uint64_t quota_bytes,
    uint64_t quota_entries, double now, double margin,
    struct vg_cache_gc_stats *st, struct vg_err *e)
{
	struct vg_evict_key *k;
	struct vg_evict_cut cut;
	uint64_t bytes = 0, count = 0;
	size_t nk = 0, i, ties;

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
			k[nk++] = (struct vg_evict_key){
			    .last_use = v[i].last_use, .size = v[i].size };
		bytes += v[i].size;
		count++;
	}
	vg_evict_select(k, nk, bytes, count, quota_bytes, quota_entries, &cut,
	    &st->over_quota);
	ties = cut.ties;
	for (i = nk = 0; i < n; i++) {
		if (v[i].why != VG_EVICT_KEEP || v[i].pinned)
			continue;
		if (vg_evict_goes(&cut, k[nk++].last_use, &ties)) {
			v[i].why = VG_EVICT_QUOTA;
			st->removed++;
			st->freed += v[i].size;
		}
	}
	free(k);
	return 0;
}

/*
 * test-evict.c - the eviction plan: purge-aligned expiry, LRU to the
 * quota in bytes and entries, pinned entries never chosen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sif-cache/evict.h"

#define NOW 1000000.0

static void
test_quota_bytes_lru(void **state)
{
	struct vg_evict_item v[] = {
		{ .last_use = 30, .purge_at = INFINITY, .size = 100 },
		{ .last_use = 10, .purge_at = INFINITY, .size = 100 },
		{ .last_use = 20, .purge_at = INFINITY, .size = 100 },
		{ .last_use = 40, .purge_at = INFINITY, .size = 100 },
	};
	struct vg_cache_gc_stats st;
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_evict_plan(v, 4, 250, 0, NOW, 86400, &st, &e),
	    0);
	assert_int_equal(v[0].why, VG_EVICT_KEEP);
	assert_int_equal(v[1].why, VG_EVICT_QUOTA);
	assert_int_equal(v[2].why, VG_EVICT_QUOTA);
	assert_int_equal(v[3].why, VG_EVICT_KEEP);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.bytes, 400);
	assert_int_equal(st.freed, 200);
	assert_false(st.over_quota);
}

static void
test_quota_entries_and_pins(void **state)
{
	struct vg_evict_item v[] = {
		{ .last_use = 1, .purge_at = INFINITY, .size = 5, .pinned = 1 },
		{ .last_use = 2, .purge_at = INFINITY, .size = 5, .pinned = 1 },
		{ .last_use = 3, .purge_at = INFINITY, .size = 5 },
		{ .last_use = 4, .purge_at = INFINITY, .size = 5 },
	};
	struct vg_cache_gc_stats st;
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_evict_plan(v, 4, 0, 1, NOW, 86400, &st, &e), 0);
	assert_int_equal(v[0].why, VG_EVICT_KEEP);
	assert_int_equal(v[1].why, VG_EVICT_KEEP);
	assert_int_equal(v[2].why, VG_EVICT_QUOTA);
	assert_int_equal(v[3].why, VG_EVICT_QUOTA);
	assert_int_equal(st.pinned, 2);
	assert_int_equal(st.removed, 2);
	assert_true(st.over_quota);
}

static void
test_purge_and_missing(void **state)
{
	struct vg_evict_item v[] = {
		{ .last_use = 9, .purge_at = NOW + 3600, .size = 7 },
		{ .last_use = 9, .purge_at = NOW + 3600, .size = 7,
		  .pinned = 1 },
		{ .last_use = 9, .purge_at = NOW + 2 * 86400, .size = 7 },
		{ .last_use = 9, .purge_at = NOW - 1, .size = 7 },
		{ .last_use = 9, .purge_at = INFINITY, .missing = 1 },
	};
	struct vg_cache_gc_stats st;
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_evict_plan(v, 5, 0, 0, NOW, 86400, &st, &e), 0);
	assert_int_equal(v[0].why, VG_EVICT_PURGE);
	assert_int_equal(v[1].why, VG_EVICT_KEEP);
	assert_int_equal(v[2].why, VG_EVICT_KEEP);
	assert_int_equal(v[3].why, VG_EVICT_PURGE);
	assert_int_equal(v[4].why, VG_EVICT_MISSING);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.removed, 3);
	assert_int_equal(st.freed, 14);
}

static void
test_empty(void **state)
{
	struct vg_cache_gc_stats st;
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_evict_plan(NULL, 0, 1, 1, NOW, 0, &st, &e), 0);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.removed, 0);
}

/* Ties of last use go in the caller's order, up to what the quota needs. */
static void
test_select_ties_in_order(void **state)
{
	struct vg_evict_key k[] = {
		{ .last_use = 5, .size = 1 },
		{ .last_use = 3, .size = 1 },
		{ .last_use = 3, .size = 1 },
		{ .last_use = 3, .size = 1 },
		{ .last_use = 1, .size = 1 },
	};
	struct vg_evict_cut cut;
	size_t ties, i;
	int over, goes[5];

	(void)state;
	vg_evict_select(k, 5, 5, 5, 0, 2, &cut, &over);
	assert_false(over);
	assert_int_equal(cut.n, 3);
	assert_true(cut.last_use == 3);
	assert_int_equal(cut.ties, 2);
	ties = cut.ties;
	for (i = 0; i < 5; i++)
		goes[i] = vg_evict_goes(&cut, k[i].last_use, &ties);
	assert_int_equal(goes[0], 0);
	assert_int_equal(goes[1], 1);
	assert_int_equal(goes[2], 1);
	assert_int_equal(goes[3], 0);
	assert_int_equal(goes[4], 1);
}

/* Under quota nothing goes; over it even with every key, all go. */
static void
test_select_none_and_all(void **state)
{
	struct vg_evict_key k[] = {
		{ .last_use = 2, .size = 10 },
		{ .last_use = INFINITY, .size = 10 },
	};
	struct vg_evict_cut cut;
	size_t ties;
	int over;

	(void)state;
	vg_evict_select(k, 2, 20, 2, 20, 2, &cut, &over);
	assert_false(over);
	assert_int_equal(cut.n, 0);
	ties = cut.ties;
	assert_false(vg_evict_goes(&cut, k[0].last_use, &ties));
	/* 30 bytes with 10 of them pinned: 5 cannot be reached */
	vg_evict_select(k, 2, 30, 3, 5, 0, &cut, &over);
	assert_true(over);
	assert_int_equal(cut.n, 2);
	ties = cut.ties;
	assert_true(vg_evict_goes(&cut, k[0].last_use, &ties));
	assert_true(vg_evict_goes(&cut, k[1].last_use, &ties));
}

/* NaN sorts as the oldest; -0 and 0 are the same time. */
static void
test_select_nan_and_zero(void **state)
{
	struct vg_evict_key k[] = {
		{ .last_use = 0.0, .size = 1 },
		{ .last_use = NAN, .size = 1 },
		{ .last_use = -0.0, .size = 1 },
		{ .last_use = -1, .size = 1 },
	};
	struct vg_evict_cut cut;
	size_t ties, i;
	int over, goes[4];

	(void)state;
	vg_evict_select(k, 4, 4, 4, 0, 1, &cut, &over);
	assert_int_equal(cut.n, 3);
	ties = cut.ties;
	for (i = 0; i < 4; i++)
		goes[i] = vg_evict_goes(&cut, k[i].last_use, &ties);
	/* NaN, -1, then the first of the two zeros */
	assert_int_equal(goes[0], 1);
	assert_int_equal(goes[1], 1);
	assert_int_equal(goes[2], 0);
	assert_int_equal(goes[3], 1);
}

/* Orders indices by (last use, index) for the reference selection. */
static const struct vg_evict_key *ref_keys;

static int
ref_order(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = ref_keys[i].last_use, y = ref_keys[j].last_use;

	if (x < y)
		return -1;
	if (x > y)
		return 1;
	return i < j ? -1 : i > j;
}

/*
 * Against a full sort and a scan, as the plan was first written: random
 * times from a small set (many ties, negative, huge), random sizes and
 * quotas in bytes, entries or both.
 */
static void
test_select_matches_sort(void **state)
{
	static const double times[] = { -1e300, -5, -0.0, 0.0, 1, 1.5,
	    1700000000.125, 1700000000.25, 4e15, INFINITY };
	struct vg_evict_key k[300], copy[300];
	struct vg_evict_cut cut;
	size_t idx[300], n, i, ties, want;
	uint64_t bytes, count, qb, qe, b, c;
	int round, over, wover, goes;
	char gone[300];

	(void)state;
	srand(42);
	for (round = 0; round < 2000; round++) {
		n = (size_t)rand() % 300;
		bytes = count = 0;
		for (i = 0; i < n; i++) {
			k[i].last_use = times[rand() % 10];
			k[i].size = (uint64_t)(rand() % 4 == 0 ? 0 :
			    rand() % 1000);
			bytes += k[i].size;
			count++;
			idx[i] = i;
		}
		/* some pinned bytes and entries that never go */
		bytes += (uint64_t)(rand() % 3) * 500;
		count += (uint64_t)(rand() % 3);
		qb = rand() % 3 == 0 ? 0 : (uint64_t)rand() % (bytes + 2);
		qe = rand() % 3 == 0 ? 0 : (uint64_t)rand() % (count + 2);
		memcpy(copy, k, n * sizeof(*k));
		ref_keys = copy;
		if (n > 1)
			qsort(idx, n, sizeof(*idx), ref_order);
		memset(gone, 0, sizeof(gone));
		b = bytes, c = count, want = 0;
		for (i = 0; i < n; i++) {
			if (!((qb > 0 && b > qb) || (qe > 0 && c > qe)))
				break;
			gone[idx[i]] = 1;
			b -= copy[idx[i]].size;
			c--;
			want++;
		}
		wover = (qb > 0 && b > qb) || (qe > 0 && c > qe);
		vg_evict_select(k, n, bytes, count, qb, qe, &cut, &over);
		assert_int_equal(over, wover);
		assert_int_equal(cut.n, want);
		ties = cut.ties;
		for (i = 0; i < n; i++) {
			goes = vg_evict_goes(&cut, k[i].last_use, &ties);
			if (goes != gone[i])
				fail_msg("round %d: key %zu (%g) goes %d, "
				    "expected %d", round, i, copy[i].last_use,
				    goes, gone[i]);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_bytes_lru),
		cmocka_unit_test(test_quota_entries_and_pins),
		cmocka_unit_test(test_purge_and_missing),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_select_ties_in_order),
		cmocka_unit_test(test_select_none_and_all),
		cmocka_unit_test(test_select_nan_and_zero),
		cmocka_unit_test(test_select_matches_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_bytes_lru),
		cmocka_unit_test(test_quota_entries_and_pins),
		cmocka_unit_test(test_purge_and_missing),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

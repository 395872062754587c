/*
 * test-usage.c - the accounting arithmetic of runner/core/usage.c:
 * efficiencies of one attempt, totals of a run, the end-of-run line, the
 * right-size suggestion with its rounding, byte formatting and the JSON
 * objects of `vigil status --json`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner/core/usage.h"

/* One attempt's usage: cpu seconds, peak, CPUs and memory given (a
 * negative value leaves a field unknown). */
static struct vg_usage
use(double cpu, long long rss, int cpus, long long mem)
{
	struct vg_usage u = { .known = 0 };

	if (cpu >= 0) {
		u.cpu_user = cpu * 0.75;
		u.cpu_sys = cpu * 0.25;
		u.known |= VG_USAGE_CPU;
	}
	if (rss >= 0) {
		u.max_rss = rss;
		u.known |= VG_USAGE_RSS;
	}
	if (cpus >= 0) {
		u.cpus = cpus;
		u.known |= VG_USAGE_CPUS;
	}
	if (mem >= 0) {
		u.mem_limit = mem;
		u.known |= VG_USAGE_MEM;
	}
	return u;
}

/* Efficiency of one attempt: CPU over wall x CPUs (1 when none asked),
 * peak over memory given; -1 when unknown. */
static void
test_eff(void **state)
{
	struct vg_usage u = use(3, 512 << 20, 2, 1LL << 30), none;

	(void)state;
	assert_true(fabs(vg_usage_cpu_eff(&u, 3) - 0.5) < 1e-9);
	assert_true(fabs(vg_usage_mem_eff(&u) - 0.5) < 1e-9);
	u = use(1.5, -1, -1, -1);
	assert_true(fabs(vg_usage_cpu_eff(&u, 3) - 0.5) < 1e-9);
	assert_true(vg_usage_mem_eff(&u) < 0);
	assert_true(vg_usage_cpu_eff(&u, 0) < 0);
	memset(&none, 0, sizeof(none));
	assert_true(vg_usage_cpu_eff(&none, 3) < 0);
	assert_true(vg_usage_mem_eff(&none) < 0);
	u = use(1, 100, 1, 0);
	assert_true(vg_usage_mem_eff(&u) < 0);
}

/* No efficiency where none can be computed: a wall time below
 * VG_USAGE_MIN_WALL (a task cancelled as it started, a 0.00 s task), or
 * CPU time past wall x CPUs beyond sampling noise; never above 100%. */
static void
test_eff_untrusted(void **state)
{
	struct vg_usage u = use(0.02, -1, 1, -1);
	struct vg_usage_sum s;
	struct vg_json_writer w;
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	/* Cancelled as it started: 0.02 s of CPU in 9 us was 220201%. */
	assert_true(vg_usage_cpu_eff(&u, 0.000009) < 0);
	u = use(0.03, -1, -1, -1);
	assert_true(vg_usage_cpu_eff(&u, 0) < 0);	/* the 0.00 s task */
	assert_true(vg_usage_cpu_eff(&u, 0.01) < 0);
	assert_true(vg_usage_cpu_eff(&u, VG_USAGE_MIN_WALL - 0.01) < 0);
	u = use(0.5, -1, 1, -1);
	assert_true(fabs(vg_usage_cpu_eff(&u, VG_USAGE_MIN_WALL) - 0.5) <
	    1e-9);
	/* Three cores busy on one given: no limit held it, no number. */
	u = use(30, -1, 1, -1);
	assert_true(vg_usage_cpu_eff(&u, 10) < 0);
	/* 4 % over on 2 CPUs is sampling noise: shown as 100 %. */
	u = use(20.8, -1, 2, -1);
	assert_true(fabs(vg_usage_cpu_eff(&u, 10) - 1.0) < 1e-9);

	/* A run of short tasks has no efficiency; its line says none. */
	vg_usage_sum_init(&s);
	u = use(0.02, 1LL << 20, 1, -1);
	vg_usage_sum_add(&s, &u, VG_ST_CANCELLED, 0.000009);
	u = use(0.03, 1LL << 20, 4, -1);
	vg_usage_sum_add(&s, &u, VG_ST_SUCCEEDED, 0.001);
	assert_true(vg_usage_sum_cpu_eff(&s) < 0);
	vg_usage_line(&s, &b);
	assert_string_equal(vg_buf_str(&b), "peak memory 1M");
	/* ... and no CPU suggestion from them either. */
	vg_buf_reset(&b);
	vg_usage_suggest(&s, &b);
	assert_string_equal(vg_buf_str(&b), "");
	/* The JSON of such an attempt says null. */
	vg_buf_reset(&b);
	vg_json_writer_init(&w, &b);
	vg_usage_json(&w, &u, 0.001);
	assert_non_null(strstr(vg_buf_str(&b), "\"cpu_eff\":null"));
	vg_buf_reset(&b);
	vg_json_writer_init(&w, &b);
	vg_usage_sum_json(&w, &s);
	assert_non_null(strstr(vg_buf_str(&b), "\"cpu_eff\":null"));
	vg_buf_release(&b);
}

/* Bytes as the status columns show them. */
static void
test_fmt_bytes(void **state)
{
	static const struct { long long v; const char *s; } c[] = {
		{ -5, "0B" }, { 0, "0B" }, { 1023, "1023B" }, { 1024, "1K" },
		{ 1536, "1.5K" }, { 640 << 10, "640K" }, { 912LL << 20, "912M" },
		{ 3LL << 29, "1.5G" }, { 8LL << 30, "8G" },
		{ 10LL << 40, "10T" }, { 3LL << 50, "3P" }, { 4LL << 60, "4096P" },
	};
	struct vg_buf b = VG_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		vg_buf_reset(&b);
		vg_usage_fmt_bytes(&b, c[i].v);
		assert_string_equal(vg_buf_str(&b), c[i].s);
	}
	vg_buf_release(&b);
}

/* The suggestion for one attempt u that ended in st (and, with
 * unsized, a second succeeded one given nothing), into b. */
static const char *
suggest_one(struct vg_buf *b, struct vg_usage u, enum vg_state st,
    int unsized)
{
	struct vg_usage_sum s;
	struct vg_usage v = use(-1, 1LL << 20, -1, -1);

	vg_usage_sum_init(&s);
	vg_usage_sum_add(&s, &u, st, 10);
	if (unsized)
		vg_usage_sum_add(&s, &v, VG_ST_SUCCEEDED, 10);
	vg_buf_reset(b);
	vg_usage_suggest(&s, b);
	return vg_buf_str(b);
}

/* A sweep that asked 1G and 2 CPUs and used 200M and half a core: the
 * line and the suggestion; failed attempts stay out of the suggestion. */
static void
test_sum_suggest(void **state)
{
	struct vg_usage_sum s;
	struct vg_usage u;
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	vg_usage_sum_init(&s);
	vg_buf_reset(&b);
	vg_usage_line(&s, &b);
	assert_int_equal(b.len, 0);
	vg_usage_suggest(&s, &b);
	assert_int_equal(b.len, 0);

	u = use(5, 200LL << 20, 2, 1LL << 30);
	vg_usage_sum_add(&s, &u, VG_ST_SUCCEEDED, 10);
	u = use(4, 180LL << 20, 2, 1LL << 30);
	vg_usage_sum_add(&s, &u, VG_ST_SUCCEEDED, 10);
	/* A failure that used a lot counts in the line, not the size. */
	u = use(40, 900LL << 20, 2, 1LL << 30);
	vg_usage_sum_add(&s, &u, VG_ST_FAILED, 20);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.nok, 2);
	assert_true(fabs(vg_usage_sum_cpu_eff(&s) - 49.0 / 80) < 1e-9);
	vg_usage_line(&s, &b);
	assert_string_equal(vg_buf_str(&b), "cpu 61% of requested, peak "
	    "memory 900M of 1G asked (88%)");
	vg_buf_reset(&b);
	vg_usage_suggest(&s, &b);
	/* 200M x 1.25 = 250M, up to 256M; 0.5 cores x 1.25 up to 1. */
	assert_string_equal(vg_buf_str(&b), "resources.memory: 256M (peak "
	    "200M of 1G asked); resources.cpus: 1 (at most 0.50 cores busy "
	    "of 2 asked)");

	/* Used most of what was given: nothing to suggest. */
	assert_string_equal(suggest_one(&b, use(7.5, 800LL << 20, 1,
	    1LL << 30), VG_ST_SUCCEEDED, 0), "");
	/* Rounding steps: 256M below 16G, whole G above. */
	assert_string_equal(suggest_one(&b, use(-1, 3LL << 30, -1,
	    64LL << 30), VG_ST_SUCCEEDED, 0), "resources.memory: 3840M "
	    "(peak 3G of 64G asked)");
	assert_string_equal(suggest_one(&b, use(-1, 20LL << 30, -1,
	    256LL << 30), VG_ST_SUCCEEDED, 0), "resources.memory: 25600M "
	    "(peak 20G of 256G asked)");
	/* A second succeeded attempt that was given no memory: no memory
	 * suggestion, which would not fit it. */
	assert_string_equal(suggest_one(&b, use(-1, 20LL << 30, -1,
	    256LL << 30), VG_ST_SUCCEEDED, 1), "");
	/* What was asked suggested again is no advice: 0.9 of 2 cores
	 * gives 2 (ceil(0.9 x 1.25)), 30M of 64M gives 64M. */
	assert_string_equal(suggest_one(&b, use(9, -1, 2, -1),
	    VG_ST_SUCCEEDED, 0), "");
	assert_string_equal(suggest_one(&b, use(-1, 30LL << 20, -1,
	    64LL << 20), VG_ST_SUCCEEDED, 0), "");
	/* 1.9 of 4 cores: 3, a quarter less, is said. */
	assert_string_equal(suggest_one(&b, use(19, -1, 4, -1),
	    VG_ST_SUCCEEDED, 0), "resources.cpus: 3 (at most 1.90 cores "
	    "busy of 4 asked)");
	/* Only failures: no suggestion at all. */
	assert_string_equal(suggest_one(&b, use(1, 1LL << 20, 4, 8LL << 30),
	    VG_ST_OOM, 0), "");
	vg_buf_release(&b);
}

/* The JSON objects: units, nulls for what is unknown. */
static void
test_json(void **state)
{
	struct vg_json_writer w;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_usage u = use(2, 100LL << 20, -1, -1);
	struct vg_usage_sum s;

	(void)state;
	vg_json_writer_init(&w, &b);
	vg_usage_json(&w, &u, 4);
	assert_non_null(strstr(vg_buf_str(&b), "\"cpu\":2"));
	assert_non_null(strstr(vg_buf_str(&b), "\"max_rss\":104857600"));
	assert_non_null(strstr(vg_buf_str(&b), "\"cpus\":null"));
	assert_non_null(strstr(vg_buf_str(&b), "\"mem_eff\":null"));
	assert_non_null(strstr(vg_buf_str(&b), "\"cpu_eff\":0.5"));
	vg_buf_reset(&b);
	vg_json_writer_init(&w, &b);
	vg_usage_sum_init(&s);
	vg_usage_sum_json(&w, &s);
	assert_non_null(strstr(vg_buf_str(&b), "\"attempts\":0"));
	assert_non_null(strstr(vg_buf_str(&b), "\"cpu\":null"));
	assert_non_null(strstr(vg_buf_str(&b), "\"suggestion\":null"));
	vg_buf_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eff),
		cmocka_unit_test(test_eff_untrusted),
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_sum_suggest),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

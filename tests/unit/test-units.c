/*
 * test-units.c - sizes, durations and the did-you-mean matcher.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runner/manifest/manifest.h"
#include "runner/manifest/schema.h"

static void
test_bytes_ok(void **state)
{
	static const struct {
		const char	*in;
		uint64_t	 want;
	} t[] = {
		{ "0", 0 }, { "10", 10 }, { "10b", 10 }, { "10B", 10 },
		{ "1k", 1024 }, { "1K", 1024 }, { "2KiB", 2048 },
		{ "2KB", 2000 }, { "2kb", 2000 },
		{ "512MiB", 512ULL << 20 }, { "512M", 512ULL << 20 },
		{ "512MB", 512000000ULL }, { "1.5G", 3ULL << 29 },
		{ "1.5GiB", 3ULL << 29 }, { "4GB", 4000000000ULL },
		{ "2 GiB", 2ULL << 30 }, { "1T", 1ULL << 40 },
		{ "1tb", 1000000000000ULL }, { "1P", 1ULL << 50 },
		{ "0.5k", 512 }, { ".5k", 512 }, { "1.", 1 },
		{ "16383P", 16383ULL << 50 },
		{ "18446744073709551615", UINT64_MAX },
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = 12345;
		if (vg_parse_bytes(t[i].in, &v) != 0)
			fail_msg("'%s' rejected", t[i].in);
		if (v != t[i].want)
			fail_msg("'%s' gave %llu, want %llu", t[i].in,
			    (unsigned long long)v,
			    (unsigned long long)t[i].want);
	}
}

static void
test_bytes_bad(void **state)
{
	static const char *const bad[] = { "", "G", "-1", "+1", "1X", "1GG",
		"1 G B", "1e3", "0x10", "1,5G", " 1", "1G ", "inf", "nan",
		"16384P", "18446744073709551616", "1.5.5", "..5", "1iB",
		NULL };
	uint64_t v = 7;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++)
		if (vg_parse_bytes(bad[i], &v) != VG_EINVAL)
			fail_msg("'%s' accepted as %llu", bad[i],
			    (unsigned long long)v);
	assert_int_equal(v, 7);
	assert_int_equal(vg_parse_bytes(NULL, &v), VG_EINVAL);
}

static void
test_duration_ok(void **state)
{
	static const struct {
		const char	*in;
		double		 want;
	} t[] = {
		{ "0", 0 }, { "30", 30 }, { "1.5", 1.5 }, { "90s", 90 },
		{ "5m", 300 }, { "1h", 3600 }, { "1h30m", 5400 },
		{ "1h30m15s", 5415 }, { "2d", 172800 }, { "1w", 604800 },
		{ "1w2d3h4m5s", 788645 }, { "500ms", 0.5 },
		{ "1m30s250ms", 90.25 }, { "1.5h", 5400 }, { "0.5d", 43200 },
		/* Slurm --time forms */
		{ "1-00:00:00", 86400 }, { "2-12", 216000 },
		{ "1-02:03", 93780 }, { "0-00:00:01", 1 },
		{ "12:34:56", 45296 }, { "90:00", 5400 }, { "5:07", 307 },
		{ "100:00:00", 360000 },
	};
	double v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = -1;
		if (vg_parse_duration(t[i].in, &v) != 0)
			fail_msg("'%s' rejected", t[i].in);
		if (v != t[i].want)
			fail_msg("'%s' gave %g, want %g", t[i].in, v,
			    t[i].want);
	}
}

static void
test_duration_bad(void **state)
{
	static const char *const bad[] = { "", "s", "-1", "-5m", "5x",
		"5 m", "30m1h", "1h1h", "1m1ms1s", "1:75", "1:2:3:4",
		"1-24:00:00", "1-", "-1-00:00", "a:b", "1::2", "1:60",
		"1e3", "5mins", "1h 30m", "1-00:60", "inf", "0x10",
		"1.5.5s", "1-2-3", NULL };
	double v = 7;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++)
		if (vg_parse_duration(bad[i], &v) != VG_EINVAL)
			fail_msg("'%s' accepted as %g", bad[i], v);
	assert_true(v == 7);
	assert_int_equal(vg_parse_duration(NULL, &v), VG_EINVAL);
}

static void
test_did_you_mean(void **state)
{
	static const char *const keys[] = { "command", "matrix", "memory",
		"backoff", "backoff_max", "cpus", "env", NULL };

	(void)state;
	assert_string_equal(vg_did_you_mean("comand", keys, 7), "command");
	assert_string_equal(vg_did_you_mean("memroy", keys, 7), "memory");
	assert_string_equal(vg_did_you_mean("Matrix", keys, 7), "matrix");
	assert_string_equal(vg_did_you_mean("backof", keys, 7), "backoff");
	assert_string_equal(vg_did_you_mean("backoff-max", keys, 7),
	    "backoff_max");
	assert_string_equal(vg_did_you_mean("cpu", keys, 7), "cpus");
	assert_string_equal(vg_did_you_mean("evn", keys, 7), "env");
	assert_null(vg_did_you_mean("xyzzy", keys, 7));
	assert_null(vg_did_you_mean("image", keys, 7));
	assert_null(vg_did_you_mean("x", keys, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_ok),
		cmocka_unit_test(test_bytes_bad),
		cmocka_unit_test(test_duration_ok),
		cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_did_you_mean),
	};

	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}

/*
 * test-purge.c - site purge presets, overrides and the expiring test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "scratch/purge.h"

#define DAY 86400.0

/* A modifiable copy of a literal, for the char * fields of the conf. */
static char *
S(const char *lit)
{
	static char bufs[8][32];
	static int n;
	char *b = bufs[n++ % 8];

	strncpy(b, lit, 31);
	return b;
}

/* A stat with the three clocks set (whole seconds). */
static struct stat
times3(double a, double m, double c)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_atim.tv_sec = (time_t)a;
	st.st_mtim.tv_sec = (time_t)m;
	st.st_ctim.tv_sec = (time_t)c;
	return st;
}

/* Each preset: age, clocks, and when a file with distinct clocks goes. */
static void
test_presets(void **state)
{
	static const struct {
		const char	*name;
		double		 at;	/* for a=3d, m=1d, c=2d */
		const char	*desc;
	} cases[] = {
		{ "nersc", 3 * DAY + 56 * DAY, "nersc: 56d by atime" },
		{ "olcf", 3 * DAY + 90 * DAY, "olcf: 90d by atime" },
		{ "jsc", 3 * DAY + 90 * DAY, "jsc: 90d by atime and mtime" },
		{ "cscs", 1 * DAY + 30 * DAY, "cscs: 30d by atime or mtime" },
		{ "alliance", 3 * DAY + 60 * DAY,
		  "alliance: 60d by atime and ctime" },
		{ "pawsey", 3 * DAY + 21 * DAY, "pawsey: 21d by atime" },
		{ "purdue", 3 * DAY + 60 * DAY,
		  "purdue: 60d by atime and mtime" },
	};
	struct vg_purge_policy p;
	struct vg_err e;
	struct stat st = times3(3 * DAY, 1 * DAY, 2 * DAY);
	char buf[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vg_err_init(&e);
		assert_int_equal(vg_purge_preset(cases[i].name, &p, &e), 0);
		assert_true(vg_purge_active(&p));
		assert_true(vg_purge_eligible_at(&p, &st) == cases[i].at);
		vg_purge_describe(&p, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].desc);
	}
	/* clocks matter: a recent mtime keeps a JSC file, not a NERSC one */
	st = times3(0, 80 * DAY, 80 * DAY);
	assert_int_equal(vg_purge_preset("jsc", &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 170 * DAY);
	assert_int_equal(vg_purge_preset("nersc", &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 56 * DAY);
	/* Alliance: a fresh ctime (as after touch -d) keeps the file */
	st = times3(0, 0, 100 * DAY);
	assert_int_equal(vg_purge_preset("alliance", &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 160 * DAY);
}

static void
test_none(void **state)
{
	struct vg_purge_policy p;
	struct vg_err e;
	struct stat st = times3(0, 0, 0);
	char buf[64];

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_purge_preset("none", &p, &e), 0);
	assert_false(vg_purge_active(&p));
	assert_true(isinf(vg_purge_eligible_at(&p, &st)));
	assert_false(vg_purge_expiring(&p, &st, 1e9, 2e9, 0));
	vg_purge_describe(&p, buf, sizeof(buf));
	assert_string_equal(buf, "none: never");
	assert_int_equal(vg_purge_from_conf(NULL, &p, &e), 0);
	assert_false(vg_purge_active(&p));
}

static void
test_unknown_preset(void **state)
{
	struct vg_purge_policy p;
	struct vg_err e;
	struct vg_purge_conf c = { .preset = S("nersk") };

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), VG_EINVAL);
	assert_string_equal(e.msg, "unknown purge preset 'nersk' (valid: "
	    "nersc, olcf, jsc, cscs, alliance, pawsey, purdue, none)");
}

static void
test_overrides(void **state)
{
	struct vg_purge_policy p;
	struct vg_purge_conf c;
	struct vg_err e;
	struct stat st = times3(10 * DAY, 20 * DAY, 30 * DAY);
	char buf[128];

	(void)state;
	vg_err_init(&e);
	/* age alone: atime */
	memset(&c, 0, sizeof(c));
	c.age = 7 * 86400;
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 17 * DAY);
	vg_purge_describe(&p, buf, sizeof(buf));
	assert_string_equal(buf, "custom: 7d by atime");
	/* preset with a clock override */
	memset(&c, 0, sizeof(c));
	c.preset = S("olcf");
	c.clock = S("mtime");
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 110 * DAY);
	/* any: the earliest of the three; all: the latest */
	c.clock = S("any");
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 100 * DAY);
	c.clock = S("all");
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 120 * DAY);
	vg_purge_describe(&p, buf, sizeof(buf));
	assert_string_equal(buf, "custom: 90d by atime and mtime and ctime");
	c.clock = S("ctime");
	c.age = 3600;
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), 0);
	assert_true(vg_purge_eligible_at(&p, &st) == 30 * DAY + 3600);
	vg_purge_describe(&p, buf, sizeof(buf));
	assert_string_equal(buf, "custom: 3600s by ctime");
	/* errors */
	c.clock = S("birth");
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), VG_EINVAL);
	assert_string_equal(e.msg, "unknown purge.clock 'birth' (valid: "
	    "atime, mtime, ctime, any, all)");
	memset(&c, 0, sizeof(c));
	c.clock = S("atime");
	assert_int_equal(vg_purge_from_conf(&c, &p, &e), VG_EINVAL);
	assert_string_equal(e.msg, "purge.clock 'atime' needs purge.age or "
	    "a purge.preset other than none");
}

/* Expiring: eligible before need + margin; default margin one day. */
static void
test_expiring(void **state)
{
	struct vg_purge_policy p;
	struct vg_err e;
	double now = 1000 * DAY;
	struct stat st;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_purge_preset("pawsey", &p, &e), 0);
	/* accessed 10 days ago: eligible in 11 days */
	st = times3(now - 10 * DAY, now - 10 * DAY, now - 10 * DAY);
	assert_false(vg_purge_expiring(&p, &st, now, 0, 0));
	assert_false(vg_purge_expiring(&p, &st, now, now + 9 * DAY, 0));
	assert_true(vg_purge_expiring(&p, &st, now, now + 10 * DAY, 0));
	assert_false(vg_purge_expiring(&p, &st, now, now + 9.5 * DAY, 0));
	/* explicit margin */
	assert_true(vg_purge_expiring(&p, &st, now, now, 11 * DAY));
	assert_false(vg_purge_expiring(&p, &st, now, now, 10 * DAY));
	/* margin from the policy */
	p.margin = 12 * 86400;
	assert_true(vg_purge_expiring(&p, &st, now, 0, 0));
	/* already eligible */
	p.margin = 0;
	st = times3(now - 30 * DAY, now, now);
	assert_true(vg_purge_expiring(&p, &st, now, 0, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_unknown_preset),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_expiring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-str.c - the bounded string copy: fits, exact fit, truncation,
 * NULL source, zero-sized destination.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/str.h"

/* Copies that fit are whole and report no truncation. */
static void
test_fits(void **state)
{
	char b[8];

	(void)state;
	memset(b, 'x', sizeof(b));
	assert_int_equal(vg_strlcpy(b, "abc", sizeof(b)), 0);
	assert_string_equal(b, "abc");
	assert_int_equal(vg_strlcpy(b, "1234567", sizeof(b)), 0);
	assert_string_equal(b, "1234567");
	assert_int_equal(vg_strlcpy(b, "", sizeof(b)), 0);
	assert_string_equal(b, "");
	memset(b, 'x', sizeof(b));
	assert_int_equal(vg_strlcpy(b, NULL, sizeof(b)), 0);
	assert_string_equal(b, "");
}

/* Longer sources are cut to n - 1 bytes and report it. */
static void
test_truncates(void **state)
{
	char b[8], one[1];

	(void)state;
	assert_int_equal(vg_strlcpy(b, "12345678", sizeof(b)), 1);
	assert_string_equal(b, "1234567");
	assert_int_equal(vg_strlcpy(b, "a much longer string", sizeof(b)), 1);
	assert_string_equal(b, "a much ");
	assert_int_equal(vg_strlcpy(one, "a", sizeof(one)), 1);
	assert_string_equal(one, "");
	assert_int_equal(vg_strlcpy(one, "", sizeof(one)), 0);
	assert_int_equal(vg_strlcpy(NULL, "a", 0), 1);
	assert_int_equal(vg_strlcpy(NULL, "", 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_truncates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

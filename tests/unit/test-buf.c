/*
 * test-buf.c - shell quoting of buffers, hex digits and the whole-write
 * helper.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/path.h"

/* Quotes s both ways and checks the two results. */
static void
check_quote(const char *s, const char *sh, const char *sq)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_shquote(&b, s);
	assert_string_equal(vg_buf_str(&b), sh);
	vg_buf_reset(&b);
	vg_buf_squote(&b, s);
	assert_string_equal(vg_buf_str(&b), sq);
	vg_buf_release(&b);
}

/* Plain words stay bare only for shquote; quotes are closed and
 * escaped the same way by both. */
static void
test_quote(void **state)
{
	(void)state;
	check_quote("a-b_c./:,+@%9", "a-b_c./:,+@%9", "'a-b_c./:,+@%9'");
	check_quote("", "''", "''");
	check_quote("it's", "'it'\\''s'", "'it'\\''s'");
	check_quote("$HOME *", "'$HOME *'", "'$HOME *'");
	check_quote("''", "''\\'''\\'''", "''\\'''\\'''");
}

/* Hex digits of either case; anything else, bytes >= 0x80 included,
 * is -1. */
static void
test_hexval(void **state)
{
	(void)state;
	assert_int_equal(vg_hexval('0'), 0);
	assert_int_equal(vg_hexval('9'), 9);
	assert_int_equal(vg_hexval('a'), 10);
	assert_int_equal(vg_hexval('F'), 15);
	assert_int_equal(vg_hexval('g'), -1);
	assert_int_equal(vg_hexval('/'), -1);
	assert_int_equal(vg_hexval(-48), -1);
	assert_int_equal(vg_hexval(0xb0), -1);
}

/* All bytes arrive through a pipe; a closed pipe gives -1 and EPIPE. */
static void
test_write_all(void **state)
{
	char out[16] = "";
	int p[2];

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(vg_write_all(p[1], "hello world", 11), 0);
	assert_int_equal(vg_write_all(p[1], "", 0), 0);
	assert_int_equal(read(p[0], out, sizeof(out) - 1), 11);
	assert_string_equal(out, "hello world");
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	assert_int_equal(vg_write_all(p[1], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(p[1]);
	assert_int_equal(vg_write_all(-1, "x", 1), -1);
	assert_int_equal(errno, EBADF);
}

/* vg_buf_add_ll prints as "%lld" and vg_buf_add_fixed as "%.*f", exact
 * halves to even as printf does; negative, huge values and a precision
 * out of range go through printf. */
static void
test_numbers(void **state)
{
	static const long long ll[] = { 0, 7, -7, 10, 99, 100, 123456789,
	    -2147483648LL, 9223372036854775807LL,
	    -9223372036854775807LL - 1 };
	static const double d[] = { 0, 0.1, 0.25, 1, 1.5, 2.675e-3, 12.34567,
	    999.9996, 1e9, 123456789.123, 4.5e15, 1e300, -1.5, -0.001 };
	struct vg_buf b = VG_BUF_INIT;
	char want[400];
	size_t i;
	int prec;

	(void)state;
	for (i = 0; i < sizeof(ll) / sizeof(ll[0]); i++) {
		vg_buf_reset(&b);
		vg_buf_add_ll(&b, ll[i]);
		snprintf(want, sizeof(want), "%lld", ll[i]);
		assert_string_equal(vg_buf_str(&b), want);
	}
	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		for (prec = 0; prec <= 7; prec++) {
			vg_buf_reset(&b);
			vg_buf_add_fixed(&b, d[i], prec);
			snprintf(want, sizeof(want), "%.*f", prec, d[i]);
			assert_string_equal(vg_buf_str(&b), want);
		}
	vg_buf_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_hexval),
		cmocka_unit_test(test_write_all),
		cmocka_unit_test(test_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

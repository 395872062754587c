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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_hexval),
		cmocka_unit_test(test_write_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-caps.c - capability names (common/caps.h): lookups with and
 * without the cap_ prefix in any case, the numbers of the kernel's ABI,
 * a mask of names and the first bad name, the lists for messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/capability.h>
#include <string.h>

#include "common/caps.h"

/* Names map to the kernel's numbers, prefix and case aside. */
static void
test_number(void **state)
{
	(void)state;
	assert_int_equal(vg_cap_number("net_bind_service"),
	    CAP_NET_BIND_SERVICE);
	assert_int_equal(vg_cap_number("CAP_NET_RAW"), CAP_NET_RAW);
	assert_int_equal(vg_cap_number("Cap_Sys_Admin"), CAP_SYS_ADMIN);
	assert_int_equal(vg_cap_number("chown"), CAP_CHOWN);
	assert_int_equal(vg_cap_number("checkpoint_restore"), 40);
	assert_int_equal(vg_cap_number("all"), -1);
	assert_int_equal(vg_cap_number("cap_"), -1);
	assert_int_equal(vg_cap_number(""), -1);
	assert_int_equal(vg_cap_number(NULL), -1);
	assert_string_equal(vg_cap_name(CAP_SYSLOG), "syslog");
	assert_string_equal(vg_cap_name(99), "?");
	assert_string_equal(vg_cap_name(-1), "?");
}

/* A mask holds every name's bit; a bad name is named and clears it. */
static void
test_mask(void **state)
{
	struct vg_strv v = VG_STRV_INIT;
	struct vg_buf b = VG_BUF_INIT;
	const char *bad;
	uint64_t m;

	(void)state;
	assert_int_equal(vg_cap_mask(&v, &m, &bad), 0);
	assert_true(m == 0);
	vg_cap_names(m, &b);
	assert_string_equal(vg_buf_str(&b), "none");
	vg_strv_push(&v, "net_bind_service");
	vg_strv_push(&v, "CAP_NET_RAW");
	assert_int_equal(vg_cap_mask(&v, &m, &bad), 0);
	assert_true(m == (1ULL << CAP_NET_BIND_SERVICE | 1ULL << CAP_NET_RAW));
	assert_null(bad);
	vg_buf_reset(&b);
	vg_cap_names(m, &b);
	assert_string_equal(vg_buf_str(&b), "net_bind_service,net_raw");
	vg_strv_push(&v, "net_bind_servic");
	assert_int_equal(vg_cap_mask(&v, &m, &bad), -1);
	assert_string_equal(bad, "net_bind_servic");
	assert_true(m == 0);
	vg_buf_reset(&b);
	vg_cap_list(&b);
	assert_true(strncmp(vg_buf_str(&b), "chown, dac_override, ", 21) == 0);
	assert_non_null(strstr(vg_buf_str(&b), ", checkpoint_restore"));
	vg_buf_release(&b);
	vg_strv_release(&v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_mask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

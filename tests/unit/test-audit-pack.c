/*
 * test-audit-pack.c - the codec of packed audit records
 * (runner/core/audit-pack.c) without a database: what is encoded decodes
 * to the same records, a string given twice is stored once, and each way
 * a row can be malformed is refused with the unpacked row left empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runner/core/audit-pack.h"

/* Decodes len bytes of data as n records; asserts -1 and an empty row. */
static void
refused(const char *data, size_t len, long long n)
{
	struct vg_audit_unpacked u;

	assert_int_equal(vg_audit_pack_decode(data, len, 10.0, n, &u), -1);
	assert_null(u.text);
	assert_null(u.str);
	assert_null(u.rec);
	assert_int_equal(u.n, 0);
}

/* Records of three decisions, two sharing their command's address, round
 * trip: strings, tasks, times to the microsecond; NULL fields stay NULL
 * and a NULL verdict comes back "deny". */
static void
test_round_trip(void **state)
{
	static const char cmd[] = "make -j2 all";
	struct vg_audit_rec a = { .run_id = "r1", .task_index = 3,
	    .mode = "run", .command = cmd, .verdict = "allow",
	    .category = "build", .rule = "r-make", .reason = "ok" };
	struct vg_audit_rec b = { .run_id = "r1", .task_index = -1,
	    .command = cmd };
	const struct vg_audit_rec *recs[] = { &a, &b, &a };
	double times[] = { 100.5, 100.25, 0 };
	struct vg_audit_packer pk;
	struct vg_audit_unpacked u;
	size_t off, i, ncmd = 0;

	(void)state;
	memset(&pk, 0, sizeof(pk));
	vg_audit_pack_encode(&pk, recs, times, 3, 100.25, 101.0, &off);
	/* The command is stored once although three records name it. */
	for (i = off; i + sizeof(cmd) - 1 <= pk.data.len; i++)
		if (memcmp(pk.data.data + i, cmd, sizeof(cmd) - 1) == 0)
			ncmd++;
	assert_int_equal(ncmd, 1);
	assert_int_equal(vg_audit_pack_decode(pk.data.data + off,
	    pk.data.len - off, 100.25, 3, &u), 0);
	assert_int_equal(u.n, 3);
	assert_string_equal(u.rec[0].command, cmd);
	assert_string_equal(u.rec[0].verdict, "allow");
	assert_string_equal(u.rec[0].reason, "ok");
	assert_int_equal(u.rec[0].task_index, 3);
	assert_true(u.rec[0].time > 100.499999 && u.rec[0].time < 100.500001);
	assert_null(u.rec[1].mode);
	assert_null(u.rec[1].rule);
	assert_string_equal(u.rec[1].verdict, "deny");
	assert_int_equal(u.rec[1].task_index, -1);
	assert_true(u.rec[1].time == 100.25);
	/* Time 0 is the now given to the encoder. */
	assert_true(u.rec[2].time > 100.999999 && u.rec[2].time < 101.000001);
	assert_string_equal(u.rec[2].run_id, "r1");
	vg_audit_unpacked_release(&u);
	assert_null(u.rec);
	/* The packer's memory serves a second row. */
	vg_audit_pack_encode(&pk, recs, times, 1, 100.5, 101.0, &off);
	assert_int_equal(vg_audit_pack_decode(pk.data.data + off,
	    pk.data.len - off, 100.5, 1, &u), 0);
	assert_string_equal(u.rec[0].category, "build");
	vg_audit_unpacked_release(&u);
	vg_audit_packer_release(&pk);
}

/* One well-formed row by hand, then each way to break it. */
static void
test_malformed(void **state)
{
	/* 2 strings, 1 record: dt 0, task 0, run_id "r", verdict "deny". */
	static const char ok[] = { 2, 1, 'r', 4, 'd', 'e', 'n', 'y', 1, 0, 0,
	    1, 0, 0, 2, 0, 0, 0 };
	char bad[sizeof(ok) + 1];
	struct vg_audit_unpacked u;
	size_t k;

	(void)state;
	assert_int_equal(vg_audit_pack_decode(ok, sizeof(ok), 10.0, 1, &u),
	    0);
	assert_string_equal(u.rec[0].run_id, "r");
	vg_audit_unpacked_release(&u);
	/* Empty, and every truncation. */
	refused(ok, 0, 1);
	for (k = 1; k < sizeof(ok); k++)
		refused(ok, k, 1);
	/* A count other than the row's, or negative. */
	refused(ok, sizeof(ok), 2);
	refused(ok, sizeof(ok), -1);
	/* Trailing bytes. */
	memcpy(bad, ok, sizeof(ok));
	bad[sizeof(ok)] = 0;
	refused(bad, sizeof(ok) + 1, 1);
	/* More strings than bytes. */
	memcpy(bad, ok, sizeof(ok));
	bad[0] = 100;
	refused(bad, sizeof(ok), 1);
	/* A string longer than what is left. */
	memcpy(bad, ok, sizeof(ok));
	bad[1] = 60;
	refused(bad, sizeof(ok), 1);
	/* A string index past the strings. */
	memcpy(bad, ok, sizeof(ok));
	bad[sizeof(ok) - 4] = 3;
	refused(bad, sizeof(ok), 1);
	/* No verdict. */
	memcpy(bad, ok, sizeof(ok));
	bad[sizeof(ok) - 4] = 0;
	refused(bad, sizeof(ok), 1);
	/* A task below -1 (zigzag 3 is -2). */
	memcpy(bad, ok, sizeof(ok));
	bad[10] = 3;
	refused(bad, sizeof(ok), 1);
	/* A varint that never ends. */
	refused("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80", 11, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

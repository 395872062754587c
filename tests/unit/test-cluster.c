/*
 * test-cluster.c - what the cluster schedulers share
 * (schedulers/cluster.h): intent lines of a job journal, well-formed or
 * not, and array specs both ways.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "schedulers/cluster.h"

static void
test_intent_parse(void **state)
{
	struct vg_cluster_intent it;

	(void)state;
	assert_int_equal(vg_cluster_intent_parse("intent submit-3.sh 2 5 "
	    "0-2,4", &it), 1);
	assert_string_equal(it.name, "submit-3.sh");
	assert_int_equal(it.attempt, 2);
	assert_int_equal(it.offset, 5);
	assert_int_equal(it.seq, 3);
	assert_int_equal(it.nidx, 4);
	assert_int_equal(it.idx[0], 5);
	assert_int_equal(it.idx[3], 9);
	free(it.idx);
	/* Not intents: a job line, a script of another name, a bad spec
	 * (its name and number still said, for the highest script). */
	assert_int_equal(vg_cluster_intent_parse("3 1 17_2", &it), 0);
	assert_null(it.idx);
	assert_int_equal(vg_cluster_intent_parse("intent other.sh 1 0 0-1",
	    &it), 0);
	assert_int_equal(it.seq, 0);
	assert_int_equal(vg_cluster_intent_parse("intent submit-7.sh 1 0 x",
	    &it), 0);
	assert_int_equal(it.seq, 7);
	assert_null(it.idx);
	assert_int_equal(vg_cluster_intent_parse("intent submit-7.sh 1 0",
	    &it), 0);
}

static void
test_array_spec(void **state)
{
	static const int idx[] = { 3, 4, 5, 9, 11, 12 };
	struct vg_buf b = VG_BUF_INIT;
	int *back = NULL;
	size_t n = 0, i;

	(void)state;
	vg_cluster_array_spec(idx, 6, 3, &b);
	assert_string_equal(vg_buf_str(&b), "0-2,6,8-9");
	assert_int_equal(vg_cluster_parse_spec(vg_buf_str(&b), 3, &back, &n),
	    0);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++)
		assert_int_equal(back[i], idx[i]);
	free(back);
	back = NULL;
	assert_int_equal(vg_cluster_parse_spec("3-1", 0, &back, &n), -1);
	free(back);
	vg_buf_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intent_parse),
		cmocka_unit_test(test_array_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

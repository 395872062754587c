/*
 * test-json.c - the JSON parser (strictness, escapes, limits, error
 * offsets) and the writer (escapes, commas, nesting, round trips).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/json.h"

/* Parses s (as a C string) and returns the doc, failing the test on error. */
static struct vg_json_doc *
parse_ok(const char *s)
{
	struct vg_json_doc *doc = NULL;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_json_parse(s, strlen(s), NULL, &doc, &e) != 0)
		fail_msg("parse of '%s' failed: %s", s, e.msg);
	assert_non_null(doc);
	return doc;
}

/* Parses n bytes expecting failure rc with exactly message msg. */
static void
parse_bad_n(const char *s, size_t n, const struct vg_json_limits *lim,
    int rc, const char *msg)
{
	struct vg_json_doc *doc = (struct vg_json_doc *)&doc;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_json_parse(s, n, lim, &doc, &e), rc);
	assert_null(doc);
	assert_int_equal(e.rc, rc);
	assert_string_equal(e.msg, msg);
}

/* Parses a C string expecting VG_EPARSE with exactly message msg. */
static void
parse_bad(const char *s, const char *msg)
{
	parse_bad_n(s, strlen(s), NULL, VG_EPARSE, msg);
}

/* Scalars, nesting, accessors, duplicate keys. */
static void
test_parse_values(void **state)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *r, *a;

	doc = parse_ok(" {\"Id\":\"abc\",\"StatusCode\":4,\"ok\":true,"
	    "\"no\":false,\"nil\":null,\"a\":[1,-2.5e2,0.125,[]],"
	    "\"o\":{},\"Id\":\"second\"}\r\n\t");
	r = vg_json_root(doc);
	assert_int_equal(r->type, VG_JSON_OBJECT);
	assert_int_equal(r->len, 8);
	assert_string_equal(vg_json_get_str(r, "Id", NULL), "abc");
	assert_true(vg_json_get_num(r, "StatusCode", -1) == 4);
	assert_true(vg_json_get_num(r, "Id", -1) == -1);
	assert_string_equal(vg_json_get_str(r, "StatusCode", "def"), "def");
	assert_null(vg_json_get_str(r, "missing", NULL));
	assert_int_equal(vg_json_get(r, "ok")->type, VG_JSON_BOOL);
	assert_int_equal(vg_json_get(r, "ok")->b, 1);
	assert_int_equal(vg_json_get(r, "no")->b, 0);
	assert_int_equal(vg_json_get(r, "nil")->type, VG_JSON_NULL);
	a = vg_json_get(r, "a");
	assert_int_equal(a->type, VG_JSON_ARRAY);
	assert_int_equal(a->len, 4);
	assert_true(a->items[0]->num == 1);
	assert_true(a->items[1]->num == -250);
	assert_true(a->items[2]->num == 0.125);
	assert_int_equal(a->items[3]->type, VG_JSON_ARRAY);
	assert_int_equal(a->items[3]->len, 0);
	assert_null(a->items[3]->items);
	assert_int_equal(vg_json_get(r, "o")->type, VG_JSON_OBJECT);
	assert_int_equal(vg_json_get(r, "o")->len, 0);
	assert_null(vg_json_get(a, "x"));
	assert_null(vg_json_get(NULL, "x"));
	assert_null(vg_json_root(NULL));
	vg_json_free(doc);
	vg_json_free(NULL);

	/* Top-level scalars are JSON texts too (RFC 8259 section 2). */
	doc = parse_ok("-0");
	assert_int_equal(vg_json_root(doc)->type, VG_JSON_NUMBER);
	vg_json_free(doc);
	doc = parse_ok("\"x\"");
	assert_string_equal(vg_json_root(doc)->str, "x");
	vg_json_free(doc);
	doc = parse_ok("1E+2");
	assert_true(vg_json_root(doc)->num == 100);
	vg_json_free(doc);
	doc = parse_ok("1e-400");
	assert_true(vg_json_root(doc)->num == 0);
	vg_json_free(doc);
	doc = parse_ok("1e-2");
	assert_true(vg_json_root(doc)->num == 0.01);
	vg_json_free(doc);
}

/* Escapes, surrogate pairs, raw UTF-8, embedded NUL. */
static void
test_parse_strings(void **state)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *r;

	doc = parse_ok("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
	assert_string_equal(vg_json_root(doc)->str, "a\"b\\c/d\b\f\n\r\t");
	assert_int_equal(vg_json_root(doc)->len, 12);
	vg_json_free(doc);

	doc = parse_ok("\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\"");
	r = vg_json_root(doc);
	assert_string_equal(r->str, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_int_equal(r->len, 10);
	vg_json_free(doc);

	doc = parse_ok("\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xef\xbf\xbf\"");
	assert_string_equal(vg_json_root(doc)->str,
	    "caf\xc3\xa9 \xf0\x9f\x98\x80 \xef\xbf\xbf");
	vg_json_free(doc);

	doc = parse_ok("\"a\\u0000b\"");
	r = vg_json_root(doc);
	assert_int_equal(r->len, 3);
	assert_memory_equal(r->str, "a\0b", 4);
	vg_json_free(doc);

	doc = parse_ok("\"\"");
	assert_string_equal(vg_json_root(doc)->str, "");
	assert_int_equal(vg_json_root(doc)->len, 0);
	vg_json_free(doc);
}

/* Every kind of malformed input, with the exact message and offset. */
static void
test_parse_errors(void **state)
{
	parse_bad("", "json: byte 0: unexpected end of input, "
	    "expected a value");
	parse_bad("   ", "json: byte 3: unexpected end of input, "
	    "expected a value");
	parse_bad("{\"a\":1,}", "json: byte 7: expected a string key");
	parse_bad("[1,]", "json: byte 3: expected a value (object, array, "
	    "string, number, true, false or null)");
	parse_bad("[1 2]", "json: byte 3: expected ',' or ']' after array "
	    "element");
	parse_bad("{\"a\":1 \"b\":2}", "json: byte 7: expected ',' or '}' "
	    "after object member");
	parse_bad("{\"a\" 1}", "json: byte 5: expected ':' after object key");
	parse_bad("{a:1}", "json: byte 1: expected a string key");
	parse_bad("[1", "json: byte 2: unexpected end of input, expected "
	    "',' or ']' after array element");
	parse_bad("01", "json: byte 1: leading zero in number");
	parse_bad("-", "json: byte 1: unexpected end of input, expected "
	    "a digit");
	parse_bad("+1", "json: byte 0: expected a value (object, array, "
	    "string, number, true, false or null)");
	parse_bad("1.", "json: byte 2: unexpected end of input, expected "
	    "a digit after '.'");
	parse_bad(".5", "json: byte 0: expected a value (object, array, "
	    "string, number, true, false or null)");
	parse_bad("1e", "json: byte 2: unexpected end of input, expected "
	    "a digit in exponent");
	parse_bad("[1e309]", "json: byte 1: number out of range of a double");
	parse_bad("-1e400", "json: byte 0: number out of range of a double");
	parse_bad("NaN", "json: byte 0: expected a value (object, array, "
	    "string, number, true, false or null)");
	parse_bad("tru", "json: byte 0: expected a value (object, array, "
	    "string, number, true, false or null)");
	parse_bad("nulls", "json: byte 4: unexpected data after the JSON "
	    "value");
	parse_bad("{} {}", "json: byte 3: unexpected data after the JSON "
	    "value");
	parse_bad("\"abc", "json: byte 4: unexpected end of input, "
	    "unterminated string");
	parse_bad("\"a\\\"", "json: byte 4: unexpected end of input, "
	    "unterminated string");
	parse_bad("\"a\tb\"", "json: byte 2: control character in string "
	    "(escape it as \\u00XX)");
	parse_bad("\"\\x\"", "json: byte 1: invalid escape (valid: \\\" \\\\ "
	    "\\/ \\b \\f \\n \\r \\t \\uXXXX)");
	parse_bad("\"\\u12\"", "json: byte 1: \\u must be followed by four "
	    "hex digits");
	parse_bad("\"\\u12g4\"", "json: byte 1: \\u must be followed by four "
	    "hex digits");
	parse_bad("\"\\ud83d\"", "json: byte 1: high surrogate not followed "
	    "by a \\u low surrogate");
	parse_bad("\"\\ud83d\\u0041\"", "json: byte 1: high surrogate not "
	    "followed by a \\u low surrogate");
	parse_bad("\"x\\ude00\"", "json: byte 2: unpaired low surrogate in "
	    "\\u escape");
	parse_bad("\"\xc3\"", "json: byte 1: invalid UTF-8 in string");
	parse_bad("\"\xc0\xaf\"", "json: byte 1: invalid UTF-8 in string");
	parse_bad("\"\xe0\x80\xaf\"", "json: byte 1: invalid UTF-8 in string");
	parse_bad("\"\xed\xa0\x80\"", "json: byte 1: invalid UTF-8 in string");
	parse_bad("\"\xf4\x90\x80\x80\"", "json: byte 1: invalid UTF-8 in "
	    "string");
	parse_bad("\"\xff\"", "json: byte 1: invalid UTF-8 in string");
	parse_bad("\xef\xbb\xbf{}", "json: byte 0: byte order mark is not "
	    "allowed in JSON");
	parse_bad("/* c */ 1", "json: byte 0: expected a value (object, "
	    "array, string, number, true, false or null)");
	parse_bad("\v1", "json: byte 0: expected a value (object, array, "
	    "string, number, true, false or null)");
	/* The input need not be NUL-terminated: n stops the parser. */
	parse_bad_n("[12]", 3, NULL, VG_EPARSE, "json: byte 3: unexpected "
	    "end of input, expected ',' or ']' after array element");
}

/* Limits on size, depth and value count. */
static void
test_parse_limits(void **state)
{
	struct vg_json_limits lim = { .max_bytes = 8 };
	struct vg_json_doc *doc;
	struct vg_err e;
	char deep[200];

	parse_bad_n("[1,2,3,4,5]", 11, &lim, VG_ELIMIT,
	    "json: document of 11 bytes is over the limit of 8");
	lim = (struct vg_json_limits){ .max_depth = 3 };
	parse_bad_n("[[[[1]]]]", 9, &lim, VG_ELIMIT,
	    "json: byte 3: nesting deeper than 3");
	vg_err_init(&e);
	assert_int_equal(vg_json_parse("[[[1]]]", 7, &lim, &doc, &e), 0);
	vg_json_free(doc);
	lim = (struct vg_json_limits){ .max_values = 3 };
	parse_bad_n("[1,2,3]", 7, &lim, VG_ELIMIT,
	    "json: byte 5: more than 3 values");
	assert_int_equal(vg_json_parse("[1,2]", 5, &lim, &doc, &e), 0);
	vg_json_free(doc);

	/* The default depth is VG_JSON_MAX_DEPTH (64). */
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	parse_bad_n(deep, 130, NULL, VG_ELIMIT,
	    "json: byte 64: nesting deeper than 64");
	assert_int_equal(vg_json_parse(deep + 1, 128, NULL, &doc, &e), 0);
	vg_json_free(doc);
}

/* Many members force the arena and the pending stack to grow. */
static void
test_parse_large(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_doc *doc;
	const struct vg_json_value *r;
	struct vg_err e;
	int i;

	vg_buf_addc(&b, '{');
	for (i = 0; i < 5000; i++)
		vg_buf_printf(&b, "%s\"k%d\":[%d,\"%0*d\"]", i ? "," : "", i, i,
		    i % 300, 0);
	vg_buf_addc(&b, '}');
	assert_int_equal(vg_json_parse(b.data, b.len, NULL, &doc, &e), 0);
	r = vg_json_root(doc);
	assert_int_equal(r->len, 5000);
	assert_true(vg_json_get(r, "k4999")->items[0]->num == 4999);
	assert_int_equal(vg_json_get(r, "k299")->items[1]->len, 299);
	vg_json_free(doc);
	vg_buf_release(&b);
}

/* The writer: nesting, commas, escapes, null strings, non-finite. */
static void
test_writer(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "s");
	vg_json_str(&w, "q\"b\\n\n\t\r\x01\x7f\xc3\xa9");
	vg_json_key(&w, "n");
	vg_json_str(&w, NULL);
	vg_json_key(&w, "a");
	vg_json_arr_begin(&w);
	vg_json_int(&w, -42);
	vg_json_num(&w, 0.5);
	vg_json_num(&w, 1.0 / 0.0);
	vg_json_bool(&w, 1);
	vg_json_bool(&w, 0);
	vg_json_null(&w);
	vg_json_obj_begin(&w);
	vg_json_obj_end(&w);
	vg_json_arr_begin(&w);
	vg_json_arr_end(&w);
	vg_json_arr_end(&w);
	vg_json_key(&w, "k\"ey");
	vg_json_strn(&w, "abcdef", 3);
	vg_json_obj_end(&w);
	assert_string_equal(vg_buf_str(&b),
	    "{\"s\":\"q\\\"b\\\\n\\n\\t\\r\\u0001\\u007f\xc3\xa9\","
	    "\"n\":null,\"a\":[-42,0.5,null,true,false,null,{},[]],"
	    "\"k\\\"ey\":\"abc\"}");
	vg_buf_release(&b);
}

/* What the writer produces, the parser reads back byte for byte. */
static void
test_round_trip(void **state)
{
	static const char *const strs[] = {
		"", "plain", "quote\" back\\ slash", "ctl\x01\x02\x1f\x7f",
		"nl\nnl", "utf8 \xc3\xa9 \xf0\x9f\x98\x80",
	};
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_json_doc *doc;
	const struct vg_json_value *r;
	struct vg_err e;
	size_t i;

	vg_json_writer_init(&w, &b);
	vg_json_arr_begin(&w);
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		vg_json_str(&w, strs[i]);
	vg_json_strn(&w, "a\0b", 3);
	/* %.15g: 15 significant digits survive the trip. */
	vg_json_num(&w, 3.14159265358979);
	vg_json_int(&w, 9007199254740991LL);
	vg_json_arr_end(&w);
	vg_err_init(&e);
	if (vg_json_parse(b.data, b.len, NULL, &doc, &e) != 0)
		fail_msg("%s in %s", e.msg, b.data);
	r = vg_json_root(doc);
	assert_int_equal(r->len, 9);
	for (i = 0; i < 6; i++)
		assert_string_equal(r->items[i]->str, strs[i]);
	assert_int_equal(r->items[6]->len, 3);
	assert_memory_equal(r->items[6]->str, "a\0b", 3);
	assert_true(r->items[7]->num == 3.14159265358979);
	assert_true(r->items[8]->num == 9007199254740991.0);
	vg_json_free(doc);
	vg_buf_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_strings),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_parse_large),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}

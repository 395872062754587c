/*
 * test-diag.c - common/diag.c: a located problem rendered as compilers
 * do, with its source line and a caret under the column, for tabs, long
 * lines, multi-byte characters, hints and places with no kept source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/diag.h"

/* Renders the one problem added at line, col of source text. */
static const char *
render(const char *text, int line, int col, const char *msg)
{
	static struct vg_buf out = VG_BUF_INIT;
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_loc loc = { "a.yaml", line, col };

	vg_diag_source(&d, "a.yaml", text, strlen(text));
	vg_diag_source(&d, "a.yaml", "ignored: a name is kept once", 28);
	vg_diag_add(&d, &loc, "%s", msg);
	vg_buf_reset(&out);
	vg_diag_render(&d, 0, &out);
	vg_diag_release(&d);
	return vg_buf_str(&out);
}

/* The line, a caret under the column, then the hint lines. */
static void
test_caret(void **state)
{
	(void)state;
	assert_string_equal(render("a: 1\nbb: x\n", 2, 5, "bad"),
	    "a.yaml:2:5: error: bad\n"
	    "    2 | bb: x\n"
	    "      |     ^\n");
	assert_string_equal(render("a: 1\n  b: 2\n", 2, 4,
	    "invalid\nhint: 'b' is indented 2 spaces; its siblings 0"),
	    "a.yaml:2:4: error: invalid\n"
	    "    2 |   b: 2\n"
	    "      |    ^\n"
	    "hint: 'b' is indented 2 spaces; its siblings 0\n");
	/* Past the last character (a missing value, the end of a file
	 * without a final newline), and a CR of a CRLF file left out. */
	assert_string_equal(render("key:\r\n", 1, 5, "empty"),
	    "a.yaml:1:5: error: empty\n"
	    "    1 | key:\n"
	    "      |     ^\n");
}

/* Tabs move to the next multiple of 8; characters count one each. */
static void
test_tabs_utf8(void **state)
{
	(void)state;
	assert_string_equal(render("\tx:\t\"\xc3\xa9t\xc3\xa9\" y\n", 1, 9,
	    "m"),
	    "a.yaml:1:9: error: m\n"
	    "    1 |         x:      \"\xc3\xa9t\xc3\xa9\" y\n"
	    "      |                     ^\n");
	/* A control character shows as '?'. */
	assert_string_equal(render("a:\x01" "b\n", 1, 4, "m"),
	    "a.yaml:1:4: error: m\n"
	    "    1 | a:?b\n"
	    "      |    ^\n");
}

/* A long line keeps 72 columns around the caret, cut ends marked. */
static void
test_long_line(void **state)
{
	char line[301];
	const char *got, *l2, *l3;

	(void)state;
	memset(line, 'a', 300);
	line[300] = '\0';
	line[149] = 'X';
	got = render(line, 1, 150, "m");
	l2 = strchr(got, '\n') + 1;
	l3 = strchr(l2, '\n') + 1;
	/* gutter (8) + "..." + 66 columns + "..." */
	assert_int_equal(l3 - l2 - 1, 8 + 3 + 66 + 3);
	assert_memory_equal(l2, "    1 | ...", 11);
	assert_int_equal(l2[11 + 40], 'X');
	assert_memory_equal(l3 - 4, "...", 3);
	assert_int_equal(strchr(l3, '^') - l3, 8 + 3 + 40);
	/* Near the start: no mark before. */
	got = render(line, 1, 3, "m");
	l2 = strchr(got, '\n') + 1;
	assert_memory_equal(l2, "    1 | aaa", 11);
}

/* Lines with no kept source, or no place, are left as they are. */
static void
test_no_source(void **state)
{
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_loc loc = { "b.yaml", 3, 1 }, file = { "a.yaml", 0, 0 };

	(void)state;
	vg_diag_source(&d, "a.yaml", "x: 1\n", 5);
	vg_diag_add(&d, &loc, "elsewhere");
	vg_diag_add(&d, &file, "whole file");
	loc.file = "a.yaml";
	loc.line = 9;
	vg_diag_add(&d, &loc, "past the end");
	vg_diag_render(&d, 0, &out);
	vg_diag_render(&d, 1, &out);
	vg_diag_render(&d, 2, &out);
	assert_string_equal(vg_buf_str(&out),
	    "b.yaml:3:1: elsewhere\n"
	    "a.yaml: whole file\n"
	    "a.yaml:9:1: error: past the end\n");
	vg_buf_release(&out);
	vg_diag_release(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caret),
		cmocka_unit_test(test_tabs_utf8),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_no_source),
	};

	return cmocka_run_group_tests_name("diag", tests, NULL, NULL);
}

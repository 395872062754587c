/*
 * test-origin.c - where a run was made: captured from the process,
 * written and read back as JSON (only the recorded names kept), and
 * entered again (directory and environment), with the errors for a
 * directory that is gone and for text that is not an origin.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/path.h"
#include "runner/core/origin.h"

struct fixture {
	char	dir[64];
	char	old[4096];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/vigil-origin-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_non_null(getcwd(f->old, sizeof(f->old)));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(chdir(f->old), 0);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Captured in dir with TZ set and LANG unset, entered from /. */
static void
test_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct vg_origin o = VG_ORIGIN_INIT, back = VG_ORIGIN_INIT;
	struct vg_buf j = VG_BUF_INIT;
	struct vg_err e;
	char cwd[4096], *wd;

	vg_err_init(&e);
	assert_int_equal(chdir(f->dir), 0);
	setenv("TZ", "Origin0", 1);
	unsetenv("LANG");
	assert_int_equal(vg_origin_capture(&o, &e), 0);
	assert_string_equal(o.workdir, f->dir);
	vg_origin_to_json(&o, &j);
	assert_int_equal(vg_origin_from_json(vg_buf_str(&j), j.len, &back,
	    &e), 0);
	assert_string_equal(back.workdir, f->dir);
	assert_true(back.dev == o.dev && back.ino == o.ino);
	wd = vg_origin_workdir(vg_buf_str(&j));
	assert_string_equal(wd, f->dir);
	free(wd);

	assert_int_equal(chdir("/"), 0);
	setenv("TZ", "Else0", 1);
	setenv("LANG", "C", 1);
	assert_int_equal(vg_origin_enter_json(vg_buf_str(&j), j.len, "r1",
	    &e), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(cwd, f->dir);
	assert_string_equal(getenv("TZ"), "Origin0");
	assert_null(getenv("LANG"));
	vg_origin_release(&o);
	vg_origin_release(&back);
	vg_buf_release(&j);
}

/* Names vigil does not record are dropped whatever the text says. */
static void
test_only_recorded_names(void **state)
{
	static const char text[] = "{\"workdir\": \"/\", \"dev\": \"1\", "
	    "\"ino\": \"2\", \"env\": {\"TZ\": \"X\", \"LD_PRELOAD\": "
	    "\"/evil.so\"}}";
	struct vg_origin o = VG_ORIGIN_INIT;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_origin_from_json(text, strlen(text), &o, &e), 0);
	assert_int_equal(o.env.n, 1);
	assert_string_equal(o.env.v[0], "TZ=X");
	vg_origin_release(&o);
}

/* A directory that is gone; text that is not an origin. */
static void
test_errors(void **state)
{
	struct fixture *f = *state;
	struct vg_origin o = VG_ORIGIN_INIT;
	struct vg_buf j = VG_BUF_INIT;
	static const char rel[] = "{\"workdir\": \"rel\"}";
	struct vg_err e;
	char cwd[4096], want[256];

	vg_err_init(&e);
	assert_int_equal(chdir(f->dir), 0);
	assert_int_equal(vg_origin_capture(&o, &e), 0);
	vg_origin_to_json(&o, &j);
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(rmdir(f->dir), 0);
	setenv("TZ", "Kept0", 1);
	assert_int_equal(vg_origin_enter_json(vg_buf_str(&j), j.len, "r2",
	    &e), VG_ENOENT);
	snprintf(want, sizeof(want), "run 'r2' was made in '%s', which no "
	    "longer exists", f->dir);
	assert_string_equal(e.msg, want);
	/* Nothing changed. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(cwd, "/");
	assert_string_equal(getenv("TZ"), "Kept0");

	assert_int_equal(vg_origin_enter_json(rel, strlen(rel), "r3", &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "run origin: no absolute 'workdir'");
	assert_int_equal(vg_origin_enter_json("{", 1, "r3", &e), VG_EPARSE);
	assert_non_null(strstr(e.msg, "run origin: "));
	/* No origin (a run made before): nothing to enter. */
	assert_int_equal(vg_origin_enter_json(NULL, 0, "r4", &e), 0);
	assert_null(vg_origin_workdir(NULL));
	vg_origin_release(&o);
	vg_buf_release(&j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup,
		    teardown),
		cmocka_unit_test(test_only_recorded_names),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * store-fixture.h - a real state database in a fresh directory for the
 * cmocka tests that need one (store, groups and notifications,
 * sessions): setup opens HOME/vigil.db under a new /tmp/vigil-test-XXXXXX,
 * teardown closes it and removes the directory.
 */
#ifndef VG_STORE_FIXTURE_H
#define VG_STORE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "runner/core/store.h"

struct ctx {
	char		*dir;		/* the test's directory */
	char		*home;		/* dir/home, the store's home */
	struct vg_store	*st;
};

/* cmocka setup: a store in a new directory. */
static __attribute__((unused)) int
setup(void **state)
{
	char tmpl[] = "/tmp/vigil-test-XXXXXX";
	struct ctx *c = calloc(1, sizeof(*c));
	struct vg_err e;

	assert_non_null(mkdtemp(tmpl));
	c->dir = vg_xstrdup(tmpl);
	c->home = vg_path_join(tmpl, "home");
	vg_err_init(&e);
	assert_int_equal(vg_store_open(c->home, &c->st, &e), 0);
	*state = c;
	return 0;
}

/* cmocka teardown: closes the store and removes the directory. */
static __attribute__((unused)) int
teardown(void **state)
{
	struct ctx *c = *state;

	vg_store_close(c->st);
	(void)vg_rm_rf(c->dir, NULL);
	free(c->dir);
	free(c->home);
	free(c);
	return 0;
}

#endif

/*
 * test-config-defaults.c - vg_config_load_defaults: the configuration
 * layers alone (site, then user, then --set) onto the built-in defaults,
 * with no job checks, and every problem named by file and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "backends/singularity.h"
#include "backends/ssh.h"
#include "backends/docker.h"
#include "runner/manifest/manifest-int.h"
#include "schedulers/slurm.h"
#include "sif-cache/cache.h"
#include "common/path.h"

struct fix {
	char	dir[64];
	char	*site, *user;
};

/* Writes text to path. */
static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int
setup(void **state)
{
	struct fix *f = vg_xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-cfgd-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->site = vg_path_join(f->dir, "site.yaml");
	f->user = vg_path_join(f->dir, "user.yaml");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	vg_rm_rf(f->dir, NULL);
	free(f->site);
	free(f->user);
	free(f);
	return 0;
}

/* Layers in order; no command needed; unset fields keep defaults. */
static void
test_layers(void **state)
{
	struct fix *f = *state;
	const char *sets[] = { "cache.quota_entries=7", NULL };
	struct vg_load_opts o = { .site_config = f->site,
	    .user_config = f->user, .sets = sets };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_manifest *m = NULL;
	struct vg_err e;

	vg_err_init(&e);
	put(f->site, "cache:\n  dir: /site/cache\n  purge:\n    preset: "
	    "nersc\nscratch:\n  path: /site/scratch\n");
	put(f->user, "cache:\n  dir: /user/cache\n");
	assert_int_equal(vg_config_load_defaults(&o, &m, &d, &e), 0);
	assert_int_equal(d.lines.n, 0);
	assert_string_equal(vg_cache_of(m)->dir, "/user/cache");
	assert_string_equal(vg_cache_of(m)->purge.preset, "nersc");
	assert_string_equal(m->scratch.path, "/site/scratch");
	assert_int_equal(vg_cache_of(m)->quota_entries, 7);
	assert_int_equal(vg_singularity_of(m)->containall, 1);
	assert_int_equal(m->scratch.keep, VG_KEEP_ON_FAILURE);
	vg_manifest_free(m);
	vg_diag_release(&d);
}

/* Missing files are fine; no_configs ignores them. */
static void
test_missing_and_off(void **state)
{
	struct fix *f = *state;
	struct vg_load_opts o = { .site_config = f->site,
	    .user_config = f->user };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_manifest *m = NULL;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_config_load_defaults(&o, &m, &d, &e), 0);
	assert_null(vg_cache_of(m)->dir);
	vg_manifest_free(m);
	put(f->user, "cache:\n  dir: /user/cache\n");
	o.no_configs = 1;
	assert_int_equal(vg_config_load_defaults(&o, &m, &d, &e), 0);
	assert_null(vg_cache_of(m)->dir);
	vg_manifest_free(m);
	vg_diag_release(&d);
}

/* Every problem, with file, line and column; no manifest comes back. */
static void
test_errors(void **state)
{
	struct fix *f = *state;
	struct vg_load_opts o = { .site_config = f->site,
	    .user_config = f->user };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_manifest *m = NULL;
	struct vg_err e;
	char *want;

	vg_err_init(&e);
	put(f->site, "scratch:\n  keep: sometimes\n");
	put(f->user, "cache:\n  nosuch: 1\n");
	assert_int_equal(vg_config_load_defaults(&o, &m, &d, &e), VG_EINVAL);
	assert_null(m);
	assert_int_equal(d.lines.n, 2);
	want = vg_xasprintf("%s:2:9: 'scratch.keep' must be one of "
	    "on-failure, always, never, not 'sometimes'", f->site);
	assert_string_equal(d.lines.v[0], want);
	free(want);
	want = vg_xasprintf("%s:2:3: ", f->user);
	assert_memory_equal(d.lines.v[1], want, strlen(want));
	free(want);
	vg_diag_release(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_layers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_off, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

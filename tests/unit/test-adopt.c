/*
 * test-adopt.c - a directory vigil keeps for the user is adopted only
 * when no one else can change it: one another user owns, one writable by
 * others, one under a directory others can write that is not sticky, a
 * file, a link planted on the way, are each refused with the path, the
 * owner and the mode named; what is made has the mode asked whatever the
 * umask; a shared base may be root's and sticky.  Tests that hand a
 * directory to another uid need root (they skip otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/adopt.h"
#include "common/path.h"

#define OTHER_UID	65534	/* nobody */

struct ctx {
	char	dir[64];
};

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	snprintf(c->dir, sizeof(c->dir), "/tmp/vigil-adopt-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;

	vg_err_init(&e);
	vg_rm_rf(c->dir, &e);
	free(c);
	return 0;
}

static int
root_only(void)
{
	if (geteuid() == 0)
		return 1;
	printf("skipped: handing a directory to another uid needs root\n");
	return 0;
}

/* Made with the mode asked though the umask is 077, then adopted again. */
static void
test_create_mode(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	struct stat st;
	char *p = vg_path_join(c->dir, "a/b/home");
	mode_t old = umask(077);
	int fd;

	vg_err_init(&e);
	fd = vg_adopt_dir(p, 0711, VG_ADOPT_CREATE, "VIGIL_HOME", &e);
	umask(old);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0711);
	close(fd);
	fd = vg_adopt_dir(p, 0700, 0, "VIGIL_HOME", &e);
	assert_true(fd >= 0);
	close(fd);
	free(p);
}

static void
test_missing(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char *p = vg_path_join(c->dir, "nope");

	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(p, 0700, 0, "VIGIL_HOME", &e),
	    VG_ENOENT);
	free(p);
}

/* Another user's directory: refused, naming owner, mode, expectation. */
static void
test_other_owner(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char *p = vg_path_join(c->dir, "home"), want[256];

	if (!root_only())
		goto out;
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chown(p, OTHER_UID, OTHER_UID), 0);
	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(p, 0700, VG_ADOPT_CREATE, "VIGIL_HOME",
	    &e), VG_EDENIED);
	snprintf(want, sizeof(want), "VIGIL_HOME '%s' is owned by ", p);
	assert_non_null(strstr(e.msg, want));
	assert_non_null(strstr(e.msg, "(uid 65534), mode 0700; vigil expects "
	    "a directory owned by you that no one else can write (you are "));
	/* As a shared base: root or the user only. */
	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(p, 01777, VG_ADOPT_SHARED,
	    "scratch.path", &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "a shared base owned by root or you"));
out:
	free(p);
}

/* Writable by others: the directory itself, or a directory on the way
 * that is not sticky. */
static void
test_writable_by_others(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char *p = vg_path_join(c->dir, "open"), *q = vg_path_join(p, "home");

	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 0777), 0);
	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(p, 0700, 0, "VIGIL_HOME", &e),
	    VG_EDENIED);
	assert_non_null(strstr(e.msg, "mode 0777"));
	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(q, 0700, VG_ADOPT_CREATE, "VIGIL_HOME",
	    &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "on its way is owned by"));
	assert_non_null(strstr(e.msg, "to be sticky"));
	assert_int_equal(access(q, F_OK), -1);	/* nothing made in it */
	/* Sticky, like /tmp: the user's own directory in it is fine. */
	assert_int_equal(chmod(p, 01777), 0);
	vg_err_init(&e);
	int fd = vg_adopt_dir(q, 0700, VG_ADOPT_CREATE, "VIGIL_HOME", &e);
	assert_true(fd >= 0);
	close(fd);
	/* ... and the sticky directory as a shared base. */
	fd = vg_adopt_dir(p, 01777, VG_ADOPT_SHARED, "scratch.path", &e);
	assert_true(fd >= 0);
	close(fd);
	free(q);
	free(p);
}

/* Under a sticky directory, another user's directory on the way. */
static void
test_other_on_the_way(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char *p = vg_path_join(c->dir, "theirs"), *q = vg_path_join(p, "home");

	if (!root_only())
		goto out;
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chown(p, OTHER_UID, OTHER_UID), 0);
	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(q, 0700, VG_ADOPT_CREATE, "VIGIL_HOME",
	    &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "every directory on the way to be "
	    "owned by root or you"));
	assert_int_equal(access(q, F_OK), -1);
out:
	free(q);
	free(p);
}

/* A file where the directory should be; a link resolved once, its
 * target then walked. */
static void
test_file_and_link(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char *f = vg_path_join(c->dir, "file"), *l = vg_path_join(c->dir,
	    "link"), *d = vg_path_join(c->dir, "real");
	int fd;

	fd = open(f, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	vg_err_init(&e);
	assert_int_equal(vg_adopt_dir(f, 0700, VG_ADOPT_CREATE, "VIGIL_HOME",
	    &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "not a directory"));
	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(symlink(d, l), 0);
	fd = vg_adopt_dir(l, 0700, 0, "VIGIL_HOME", &e);
	assert_true(fd >= 0);
	close(fd);
	free(f);
	free(l);
	free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_mode, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_owner, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_writable_by_others, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_other_on_the_way, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_file_and_link, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-beneath.c - acting beneath a directory a task can write: a link
 * in any component, "..", an absolute path, a FIFO, a hard link and a
 * file of another owner are refused, with openat2 and with the
 * component walk; directories are made without following links; a
 * replacement never follows what stands at its names; a file named by
 * its whole path is opened in its directory as beneath it.
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

#include "common/beneath.h"
#include "common/path.h"

struct ctx {
	char	dir[64];	/* the anchor: dir/a */
	char	out[80];	/* outside it: dir/victim */
	int	fd;		/* of dir/a */
};

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char p[160];
	int fd;

	assert_non_null(c);
	snprintf(c->dir, sizeof(c->dir), "/tmp/vigil-beneath-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(p, sizeof(p), "%s/a", c->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/a/sub", c->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(c->out, sizeof(c->out), "%s/victim", c->dir);
	fd = open(c->out, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "secret\n", 7), 7);
	close(fd);
	snprintf(p, sizeof(p), "%s/a", c->dir);
	c->fd = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(c->fd >= 0);
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	close(c->fd);
	(void)vg_rm_rf(c->dir, NULL);
	free(c);
	vg_beneath_force_walk(0);
	return 0;
}

/* The victim still holds exactly its first content. */
static void
victim_intact(const struct ctx *c)
{
	struct vg_buf b = VG_BUF_INIT;

	assert_int_equal(vg_read_file(c->out, 100, &b, NULL), 0);
	assert_int_equal(b.len, 7);
	assert_memory_equal(b.data, "secret\n", 7);
	vg_buf_release(&b);
}

/* Both ways of walking, one after the other. */
static void
links_refused_in(struct ctx *c)
{
	char p[200];
	int fd;

	snprintf(p, sizeof(p), "%s/a/out", c->dir);
	assert_int_equal(symlink(c->out, p), 0);
	/* last component */
	errno = 0;
	assert_int_equal(vg_beneath_open(c->fd, "out", O_WRONLY | O_APPEND,
	    0), -1);
	assert_int_equal(errno, ELOOP);
	/* a middle component */
	snprintf(p, sizeof(p), "%s/a/d", c->dir);
	assert_int_equal(symlink(c->dir, p), 0);
	errno = 0;
	assert_int_equal(vg_beneath_open(c->fd, "d/victim", O_RDONLY, 0),
	    -1);
	assert_int_equal(errno, ELOOP);
	/* "..", absolute, empty */
	errno = 0;
	assert_int_equal(vg_beneath_open(c->fd, "../victim", O_RDONLY, 0),
	    -1);
	assert_int_equal(errno, EXDEV);
	errno = 0;
	assert_int_equal(vg_beneath_open(c->fd, "sub/../../victim", O_RDONLY,
	    0), -1);
	assert_int_equal(errno, EXDEV);
	errno = 0;
	assert_int_equal(vg_beneath_open(c->fd, c->out, O_RDONLY, 0), -1);
	assert_int_equal(errno, EXDEV);
	assert_int_equal(vg_beneath_open(c->fd, "", O_RDONLY, 0), -1);
	/* an ordinary file beneath is fine, through "." and "//" too */
	fd = vg_beneath_open(c->fd, "sub//./f", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	victim_intact(c);
}

static void
test_links_refused(void **state)
{
	links_refused_in(*state);
}

static void
test_links_refused_walk(void **state)
{
	vg_beneath_force_walk(1);
	links_refused_in(*state);
}

/* vg_beneath_file: a FIFO does not hang, a hard link and a file of
 * another owner are refused, O_TRUNC never reaches a refused file. */
static void
test_file_checks(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char p[200];
	int fd;

	vg_err_init(&e);
	snprintf(p, sizeof(p), "%s/a/fifo", c->dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(vg_beneath_file(c->fd, "fifo", O_WRONLY | O_APPEND,
	    0, "the test", &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "not a regular file"));
	assert_int_equal(vg_beneath_file(c->fd, "fifo", O_RDONLY, 0,
	    "the test", &e), VG_EDENIED);
	snprintf(p, sizeof(p), "%s/a/hard", c->dir);
	assert_int_equal(link(c->out, p), 0);
	assert_int_equal(vg_beneath_file(c->fd, "hard", O_WRONLY | O_TRUNC,
	    0, "the test", &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "hard links"));
	victim_intact(c);
	snprintf(p, sizeof(p), "%s/a/theirs", c->dir);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 4321, 4321), 0);
		assert_int_equal(vg_beneath_file(c->fd, "theirs", O_RDONLY, 0,
		    "the test", &e), VG_EDENIED);
		assert_non_null(strstr(e.msg, "owned by uid 4321"));
	}
	snprintf(p, sizeof(p), "%s/a/out", c->dir);
	assert_int_equal(symlink(c->out, p), 0);
	assert_int_equal(vg_beneath_file(c->fd, "out", O_WRONLY | O_APPEND |
	    O_CREAT, 0600, "task directory '/t'", &e), VG_EDENIED);
	assert_string_equal(e.msg, "'out' in task directory '/t' is a "
	    "symbolic link or has one on its way; vigil never follows one "
	    "there");
	fd = vg_beneath_file(c->fd, "mine", O_WRONLY | O_APPEND | O_CREAT,
	    0600, "the test", &e);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);	/* blocking again, fine */
	close(fd);
	victim_intact(c);
}

/* Directories are made beneath; a link on the way is refused and
 * nothing is made where it points. */
static void
test_mkdirs(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	struct stat st;
	char p[200];
	int fd;

	vg_err_init(&e);
	fd = vg_beneath_mkdirs(c->fd, "x/y/z", 0700, "the test", &e);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/a/x/y/z", c->dir);
	assert_int_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/a/l", c->dir);
	assert_int_equal(symlink(c->dir, p), 0);
	assert_int_equal(vg_beneath_mkdirs(c->fd, "l/made", 0700, "the test",
	    &e), VG_EDENIED);
	snprintf(p, sizeof(p), "%s/made", c->dir);
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(vg_beneath_mkdirs(c->fd, "x/../../made", 0700,
	    "the test", &e), VG_EDENIED);
}

/* A replacement removes what stands at its temporary name and renames
 * over a link at the name: the link's target is untouched. */
static void
test_replace(void **state)
{
	struct ctx *c = *state;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	struct stat st;
	char p[200];

	vg_err_init(&e);
	snprintf(p, sizeof(p), "%s/a/rec", c->dir);
	assert_int_equal(symlink(c->out, p), 0);
	snprintf(p, sizeof(p), "%s/a/.rec.vigil-tmp.%ld", c->dir,
	    (long)getpid());
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(vg_beneath_replace(c->fd, "rec", "new\n", 4, 0600,
	    "the test", &e), 0);
	snprintf(p, sizeof(p), "%s/a/rec", c->dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(vg_beneath_read(c->dir, 0, "a/rec", 100, &b, &e), 0);
	assert_int_equal(b.len, 4);
	vg_buf_release(&b);
	victim_intact(c);
	assert_int_equal(vg_beneath_replace(c->fd, "x/rec", "n", 1, 0600,
	    "the test", &e), VG_EINVAL);
}

/* vg_beneath_read and _file_in: the last up components of dir are
 * walked without links; a missing file is VG_ENOENT. */
static void
test_read_in(void **state)
{
	struct ctx *c = *state;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	char p[200], d[200];
	int fd;

	vg_err_init(&e);
	snprintf(d, sizeof(d), "%s/a/sub", c->dir);
	assert_int_equal(vg_beneath_read(d, 1, "none", 10, &b, &e),
	    VG_ENOENT);
	fd = vg_beneath_file_in(d, 1, "f", O_WRONLY | O_CREAT, 0600, &e);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_int_equal(vg_beneath_read(d, 1, "f", 10, &b, &e), 0);
	assert_int_equal(b.len, 3);
	vg_buf_reset(&b);
	assert_int_equal(vg_beneath_read(d, 1, "f", 2, &b, &e), VG_ELIMIT);
	vg_buf_reset(&b);
	/* sub replaced by a link to the directory holding the victim */
	snprintf(p, sizeof(p), "%s/a/sub2", c->dir);
	assert_int_equal(rename(d, p), 0);
	assert_int_equal(symlink(c->dir, d), 0);
	assert_int_equal(vg_beneath_read(d, 1, "victim", 100, &b, &e),
	    VG_EDENIED);
	assert_int_equal(b.len, 0);
	fd = vg_beneath_dir_in(d, 1, &e);
	assert_int_equal(fd, VG_EDENIED);
	vg_buf_release(&b);
	victim_intact(c);
}

/* vg_beneath_file_path: the last component in its directory, as
 * _file_in; a link there is refused, a bare name is no path. */
static void
test_file_path(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char p[200];
	int fd;

	vg_err_init(&e);
	snprintf(p, sizeof(p), "%s/a/f", c->dir);
	fd = vg_beneath_file_path(p, O_WRONLY | O_CREAT, 0600, &e);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/a/none", c->dir);
	assert_int_equal(vg_beneath_file_path(p, O_RDONLY, 0, &e), VG_ENOENT);
	snprintf(p, sizeof(p), "%s/a/l", c->dir);
	assert_int_equal(symlink(c->out, p), 0);
	assert_true(vg_beneath_file_path(p, O_WRONLY | O_TRUNC, 0, &e) < 0);
	assert_int_equal(vg_beneath_file_path("f", O_RDONLY, 0, &e),
	    VG_EINVAL);
	assert_non_null(strstr(e.msg, "not a path"));
	assert_int_equal(vg_beneath_file_path("/tmp/", O_RDONLY, 0, &e),
	    VG_EINVAL);
	victim_intact(c);
}

/* vg_beneath_check: owner and forbidden mode bits. */
static void
test_check(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(fchmod(c->fd, 0700), 0);
	assert_int_equal(vg_beneath_check(c->fd, geteuid(), 022, "'a'", &e),
	    0);
	assert_int_equal(fchmod(c->fd, 0777), 0);
	assert_int_equal(vg_beneath_check(c->fd, geteuid(), 022, "'a'", &e),
	    VG_EDENIED);
	assert_non_null(strstr(e.msg, "has mode 0777"));
	assert_int_equal(vg_beneath_check(c->fd, geteuid() + 1, 0, "'a'",
	    &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "is owned by uid"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_links_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_links_refused_walk,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_checks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_in, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_path, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

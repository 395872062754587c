/*
 * test-dirpool.c - the pool of empty directories: made when the pool is
 * empty, pooled when empty and ours with mode 0700, refused when not
 * empty, never renamed over an existing name, other modes removed, a
 * dead process's pooled directories swept, a fork's close harmless, and
 * a pool that could not open behaving as mkdirat and unlinkat.
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
#include <sys/wait.h>
#include <unistd.h>

#include "common/dirpool.h"
#include "common/path.h"

struct ctx {
	char	dir[64];
	int	tasks;		/* dir/tasks */
	int	tmp;		/* dir/tmp, the pool's parent */
};

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char p[128];

	assert_non_null(c);
	snprintf(c->dir, sizeof(c->dir), "/tmp/vigil-dirpool-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(p, sizeof(p), "%s/tasks", c->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	c->tasks = open(p, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/tmp", c->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	c->tmp = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(c->tasks >= 0 && c->tmp >= 0);
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	close(c->tasks);
	close(c->tmp);
	vg_rm_rf(c->dir, NULL);
	free(c);
	return 0;
}

/* True when name exists under dfd. */
static int
there(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The pool's name of this process's pooled directory n. */
static const char *
pooled(const char *prefix, unsigned n, char *buf, size_t len)
{
	snprintf(buf, len, "%s%ld.d%u", prefix, (long)getpid(), n);
	return buf;
}

/* Made, pooled, taken again (the same inode), refused when not empty
 * and never over an existing name. */
static void
test_cycle(void **state)
{
	struct ctx *c = *state;
	struct vg_dirpool p = VG_DIRPOOL_INIT;
	struct stat a, b;
	char name[64];
	int fd;

	assert_int_equal(vg_dirpool_open(&p, c->tmp, "x."), 0);
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "0"), 0);
	assert_int_equal(fstatat(c->tasks, "0", &a, 0), 0);
	assert_int_equal(a.st_mode & 07777, 0700);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "0"), 0);
	assert_false(there(c->tasks, "0"));
	assert_true(there(c->tmp, pooled("x.", 0, name, sizeof(name))));
	assert_int_equal(vg_dirpool_count(&p), 1);
	/* Taken for the next task: a rename, no new inode. */
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "1"), 0);
	assert_int_equal(fstatat(c->tasks, "1", &b, 0), 0);
	assert_true(a.st_ino == b.st_ino);
	assert_int_equal(vg_dirpool_count(&p), 0);
	/* Something in it: refused, as rmdir(2) does. */
	fd = openat(c->tasks, "1/out", O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	errno = 0;
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "1"), -1);
	assert_int_equal(errno, ENOTEMPTY);
	assert_true(there(c->tasks, "1/out"));
	assert_int_equal(vg_dirpool_count(&p), 0);
	/* Never over an existing name: the pooled one stays pooled. */
	assert_int_equal(mkdirat(c->tasks, "2", 0700), 0);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "2"), 0);
	assert_int_equal(vg_dirpool_count(&p), 1);
	errno = 0;
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "1"), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(vg_dirpool_count(&p), 1);
	/* Closing removes what is pooled. */
	vg_dirpool_close(&p);
	assert_false(there(c->tmp, pooled("x.", 1, name, sizeof(name))));
	vg_dirpool_close(&p);		/* twice is harmless */
}

/* A directory of another mode is removed, not pooled; a missing one is
 * ENOENT. */
static void
test_other_mode(void **state)
{
	struct ctx *c = *state;
	struct vg_dirpool p = VG_DIRPOOL_INIT;

	assert_int_equal(vg_dirpool_open(&p, c->tmp, ""), 0);
	assert_int_equal(mkdirat(c->tasks, "w", 0700), 0);
	assert_int_equal(fchmodat(c->tasks, "w", 0755, 0), 0);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "w"), 0);
	assert_false(there(c->tasks, "w"));
	assert_int_equal(vg_dirpool_count(&p), 0);
	errno = 0;
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "none"), -1);
	assert_int_equal(errno, ENOENT);
	vg_dirpool_close(&p);
}

/* The pid of a process that has ended (a child forked and reaped). */
static long
dead_pid(void)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return (long)pid;
}

/* Opening sweeps a dead process's pooled directories of the prefix and
 * leaves a live one's (init's), other prefixes' and other names. */
static void
test_sweep(void **state)
{
	struct ctx *c = *state;
	struct vg_dirpool p = VG_DIRPOOL_INIT;
	char mine[64], other[64];
	long pid = dead_pid();

	snprintf(mine, sizeof(mine), "x.%ld.d3", pid);
	snprintf(other, sizeof(other), "y.%ld.d4", pid);
	assert_int_equal(mkdirat(c->tmp, mine, 0700), 0);
	assert_int_equal(mkdirat(c->tmp, other, 0700), 0);
	assert_int_equal(mkdirat(c->tmp, "x.1.d0", 0700), 0);
	assert_int_equal(mkdirat(c->tmp, "x.other", 0700), 0);
	assert_int_equal(vg_dirpool_open(&p, c->tmp, "x."), 0);
	assert_false(there(c->tmp, mine));
	assert_true(there(c->tmp, other));
	assert_true(there(c->tmp, "x.1.d0"));
	assert_true(there(c->tmp, "x.other"));
	vg_dirpool_close(&p);
}

/* Makes dfd/name a file of mode 0600 holding text (none when NULL). */
static void
file_at(int dfd, const char *name, const char *text)
{
	int fd = openat(dfd, name, O_CREAT | O_WRONLY | O_TRUNC, 0600);

	assert_true(fd >= 0);
	if (text != NULL)
		assert_int_equal(write(fd, text, strlen(text)),
		    (ssize_t)strlen(text));
	close(fd);
}

/* Kept names (vg_dirpool_keep): a directory holding only them, empty,
 * is pooled with them and comes out with them; one with output in one
 * is refused and loses the other, empty one; one holding a kept name
 * that is not an empty file of mode 0600 is refused; without a pool the
 * empty kept files are removed with the directory; close and the sweep
 * remove pooled directories with their files. */
static void
test_keep(void **state)
{
	static const char *const outs[] = { "stdout", "stderr", NULL };
	struct ctx *c = *state;
	struct vg_dirpool p = VG_DIRPOOL_INIT, none = VG_DIRPOOL_INIT;
	char name[128], dead[64];
	struct stat a, b;

	assert_int_equal(vg_dirpool_open(&p, c->tmp, "k."), 0);
	vg_dirpool_keep(&p, outs);
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "0"), 0);
	file_at(c->tasks, "0/stdout", NULL);
	file_at(c->tasks, "0/stderr", NULL);
	assert_int_equal(fstatat(c->tasks, "0/stdout", &a, 0), 0);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "0"), 0);
	assert_false(there(c->tasks, "0"));
	assert_int_equal(vg_dirpool_count(&p), 1);
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "1"), 0);
	assert_int_equal(fstatat(c->tasks, "1/stdout", &b, 0), 0);
	assert_true(a.st_ino == b.st_ino);
	assert_true(there(c->tasks, "1/stderr"));

	/* Output in stdout: stays, and its empty stderr goes. */
	file_at(c->tasks, "1/stdout", "hi\n");
	errno = 0;
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "1"), -1);
	assert_int_equal(errno, ENOTEMPTY);
	assert_true(there(c->tasks, "1/stdout"));
	assert_false(there(c->tasks, "1/stderr"));
	/* A kept name of another mode is not an empty output. */
	assert_int_equal(unlinkat(c->tasks, "1/stdout", 0), 0);
	file_at(c->tasks, "1/stdout", NULL);
	assert_int_equal(fchmodat(c->tasks, "1/stdout", 0644, 0), 0);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "1"), -1);
	assert_true(there(c->tasks, "1/stdout"));
	assert_int_equal(unlinkat(c->tasks, "1/stdout", 0), 0);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "1"), 0);

	/* No pool: removed with its empty kept files. */
	none.fd = -1;
	vg_dirpool_keep(&none, outs);
	assert_int_equal(mkdirat(c->tasks, "2", 0700), 0);
	file_at(c->tasks, "2/stderr", NULL);
	assert_int_equal(vg_dirpool_rmdirat(&none, c->tasks, "2"), 0);
	assert_false(there(c->tasks, "2"));

	/* Close removes a pooled directory with its files. */
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "3"), 0);
	file_at(c->tasks, "3/stdout", NULL);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "3"), 0);
	pooled("k.", 2, name, sizeof(name));
	assert_true(there(c->tmp, name));
	vg_dirpool_close(&p);
	assert_false(there(c->tmp, name));

	/* A dead vigil's pooled directory with its files is swept. */
	snprintf(dead, sizeof(dead), "k.%ld.d7", dead_pid());
	assert_int_equal(mkdirat(c->tmp, dead, 0700), 0);
	snprintf(name, sizeof(name), "%s/stdout", dead);
	file_at(c->tmp, name, NULL);
	assert_int_equal(vg_dirpool_open(&p, c->tmp, "k."), 0);
	assert_false(there(c->tmp, dead));
	vg_dirpool_close(&p);
}

/* A forked child's close forgets the pool; the parent's stays. */
static void
test_fork(void **state)
{
	struct ctx *c = *state;
	struct vg_dirpool p = VG_DIRPOOL_INIT;
	char name[64];
	pid_t pid;
	int st;

	assert_int_equal(vg_dirpool_open(&p, c->tmp, ""), 0);
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "5"), 0);
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "5"), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The child's calls do not use the parent's pool. */
		int ok = vg_dirpool_count(&p) == 0 &&
		    vg_dirpool_mkdirat(&p, c->tasks, "6") == 0;

		vg_dirpool_close(&p);
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(there(c->tmp, pooled("", 0, name, sizeof(name))));
	assert_int_equal(vg_dirpool_count(&p), 1);
	vg_dirpool_close(&p);
	assert_false(there(c->tmp, name));
}

/* A pool that did not open (a bad prefix, a closed parent) makes and
 * removes directories itself. */
static void
test_no_pool(void **state)
{
	struct ctx *c = *state;
	struct vg_dirpool p = VG_DIRPOOL_INIT;

	errno = 0;
	assert_int_equal(vg_dirpool_open(&p, c->tmp, "a/b"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(vg_dirpool_open(&p, -1, ""), -1);
	assert_int_equal(vg_dirpool_mkdirat(&p, c->tasks, "7"), 0);
	assert_true(there(c->tasks, "7"));
	assert_int_equal(vg_dirpool_rmdirat(&p, c->tasks, "7"), 0);
	assert_false(there(c->tasks, "7"));
	assert_int_equal(vg_dirpool_count(&p), 0);
	vg_dirpool_close(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_mode, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_pool, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

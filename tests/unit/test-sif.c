/*
 * test-sif.c - the SIF header, descriptor and partition checks: a valid
 * image passes, and each kind of damage is named exactly.
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

#include "helpers/sifgen.h"
#include "common/buf.h"
#include "common/path.h"
#include "sif-cache/sif.h"

struct fix {
	char		 dir[64];
	char		*path;
	unsigned char	*img;
	size_t		 len;
};

/* A private directory and a valid in-memory image for the host. */
static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-test-sif-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->path = vg_path_join(f->dir, "x.sif");
	f->img = sifgen_build(vg_sif_host_arch(), 4096, &f->len);
	*state = f;
	return 0;
}

/* Removes the directory and frees the fixture. */
static int
teardown(void **state)
{
	struct fix *f = *state;

	vg_rm_rf(f->dir, NULL);
	free(f->path);
	free(f->img);
	free(f);
	return 0;
}

/* Writes the fixture's image (possibly patched) and verifies the file. */
static int
verify_img(struct fix *f, size_t len, struct vg_err *e)
{
	assert_int_equal(sifgen_write(f->path, f->img, len), 0);
	vg_err_init(e);
	return vg_sif_verify_file(f->path, e);
}

/* Expects verification to fail with rc and "'PATH': msg". */
static void
expect_fail(struct fix *f, size_t len, int rc, const char *msg)
{
	struct vg_err e;
	char want[2048];

	assert_int_equal(verify_img(f, len, &e), rc);
	snprintf(want, sizeof(want), "'%s': %s", f->path, msg);
	assert_string_equal(e.msg, want);
	/* the in-memory form agrees */
	vg_err_init(&e);
	assert_int_equal(vg_sif_check_mem(f->img, len, NULL, &e), rc);
	assert_string_equal(e.msg, msg);
}

static void
test_valid(void **state)
{
	struct fix *f = *state;
	struct vg_err e;

	assert_int_equal(verify_img(f, f->len, &e), 0);
	assert_int_equal(vg_sif_check_mem(f->img, f->len, NULL, &e), 0);
}

static void
test_host_arch(void **state)
{
	(void)state;
#if defined(__x86_64__)
	assert_string_equal(vg_sif_host_arch(), "02");
#endif
	assert_string_equal(vg_sif_arch_name("02"), "amd64");
	assert_string_equal(vg_sif_arch_name("04"), "arm64");
	assert_string_equal(vg_sif_arch_name("99"), "unknown");
}

static void
test_missing(void **state)
{
	struct fix *f = *state;
	struct vg_err e;
	char want[256];

	vg_err_init(&e);
	assert_int_equal(vg_sif_verify_file(f->path, &e), VG_ENOENT);
	snprintf(want, sizeof(want), "'%s' does not exist", f->path);
	assert_string_equal(e.msg, want);
}

static void
test_directory(void **state)
{
	struct fix *f = *state;
	struct vg_err e;
	char want[256];

	vg_err_init(&e);
	assert_int_equal(vg_sif_verify_file(f->dir, &e), VG_EPARSE);
	snprintf(want, sizeof(want), "'%s' is not a regular file", f->dir);
	assert_string_equal(e.msg, want);
}

static void
test_short(void **state)
{
	expect_fail(*state, 100, VG_EPARSE, "file is 100 bytes, shorter than "
	    "the 128-byte SIF header (truncated?)");
	expect_fail(*state, 0, VG_EPARSE, "file is 0 bytes, shorter than "
	    "the 128-byte SIF header (truncated?)");
}

static void
test_magic(void **state)
{
	struct fix *f = *state;

	f->img[33] = 'x';
	expect_fail(f, f->len, VG_EPARSE, "not a SIF image (no \"SIF_MAGIC\" "
	    "at offset 32)");
}

static void
test_version(void **state)
{
	struct fix *f = *state;

	memcpy(f->img + 42, "02", 3);
	expect_fail(f, f->len, VG_EPARSE, "unsupported SIF version \"02\" "
	    "(expected \"01\")");
}

static void
test_arch_mismatch(void **state)
{
	struct fix *f = *state;
	struct vg_err e;

	free(f->img);
	f->img = sifgen_build("04", 4096, &f->len);
	expect_fail(f, f->len, VG_EUNSUPPORTED, "image is built for arm64 "
	    "(SIF arch \"04\"), this host is amd64");
	/* explicitly for arm64 it passes */
	vg_err_init(&e);
	assert_int_equal(vg_sif_check_mem(f->img, f->len, "04", &e), 0);
	/* header says amd64 but the partition arm64 */
	memcpy(f->img + 45, "02", 3);
	expect_fail(f, f->len, VG_EUNSUPPORTED, "primary partition is built "
	    "for arm64 (SIF arch \"04\"), this host is amd64");
}

static void
test_truncated_table(void **state)
{
	expect_fail(*state, 5000, VG_EPARSE, "descriptor table (offset 4096, "
	    "2340 bytes) ends beyond the end of the file (5000 bytes; "
	    "truncated?)");
}

static void
test_truncated_data(void **state)
{
	struct fix *f = *state;

	/* header's data section first, then the descriptor itself */
	expect_fail(f, f->len - 1, VG_EPARSE, "data section (offset 6436, "
	    "size 5852) ends beyond the end of the file (12287 bytes; "
	    "truncated?)");
	sifgen_put64(f->img + 120, 0);
	expect_fail(f, f->len - 1, VG_EPARSE, "descriptor 2 data (offset "
	    "8192, size 4096) ends beyond the end of the file (12287 bytes; "
	    "truncated?)");
}

static void
test_squashfs_magic(void **state)
{
	struct fix *f = *state;

	memcpy(f->img + SIFGEN_PART_OFF, "\0\0\0\0", 4);
	expect_fail(f, f->len, VG_EPARSE, "primary partition (descriptor 2, "
	    "offset 8192) does not start with the squashfs magic "
	    "(corrupt?)");
}

static void
test_no_primary(void **state)
{
	struct fix *f = *state;

	/* parttype: system, not primary */
	sifgen_put32(f->img + SIFGEN_DESCROFF + 585 + 205, 1);
	expect_fail(f, f->len, VG_EPARSE, "no primary system partition (an "
	    "OCI-SIF or data-only image cannot be run)");
}

static void
test_two_primary(void **state)
{
	struct fix *f = *state;

	/* descriptor 3 becomes a copy of the partition descriptor */
	memcpy(f->img + SIFGEN_DESCROFF + 2 * 585,
	    f->img + SIFGEN_DESCROFF + 585, 585);
	expect_fail(f, f->len, VG_EPARSE, "2 primary system partitions "
	    "(expected one)");
}

static void
test_fstype(void **state)
{
	struct fix *f = *state;

	sifgen_put32(f->img + SIFGEN_DESCROFF + 585 + 201, 4);	/* raw */
	expect_fail(f, f->len, VG_EPARSE, "primary partition (descriptor 2) "
	    "has file system type 4 (expected 1, squashfs)");
}

static void
test_counts(void **state)
{
	struct fix *f = *state;

	sifgen_put64(f->img + 88, 0);
	expect_fail(f, f->len, VG_EPARSE, "descriptor count 0 out of range "
	    "(1 to 4096)");
	sifgen_put64(f->img + 88, 100000);
	expect_fail(f, f->len, VG_EPARSE, "descriptor count 100000 out of "
	    "range (1 to 4096)");
	sifgen_put64(f->img + 88, SIFGEN_NDESCR);
	sifgen_put64(f->img + 80, 5);
	expect_fail(f, f->len, VG_EPARSE, "free descriptor count 5 out of "
	    "range (0 to 4)");
	sifgen_put64(f->img + 80, 2);
	sifgen_put64(f->img + 104, 585);
	expect_fail(f, f->len, VG_EPARSE, "descriptor table size 585 is less "
	    "than 4 descriptors of 585 bytes");
	sifgen_put64(f->img + 104, 4 * 585);
	sifgen_put64(f->img + 96, 64);
	expect_fail(f, f->len, VG_EPARSE, "descriptor table offset 64 out of "
	    "range");
	sifgen_put64(f->img + 96, SIFGEN_DESCROFF);
	sifgen_put64(f->img + 112, -1);
	expect_fail(f, f->len, VG_EPARSE, "data section (offset -1, size "
	    "5852) out of range");
}

static void
test_descriptor_fields(void **state)
{
	struct fix *f = *state;
	unsigned char *d = f->img + SIFGEN_DESCROFF + 585;

	d[4] = 2;
	expect_fail(f, f->len, VG_EPARSE, "descriptor used flag is 2 "
	    "(expected 0 or 1)");
	d[4] = 1;
	sifgen_put32(d, 0x1234);
	expect_fail(f, f->len, VG_EPARSE, "descriptor 2 has unknown data "
	    "type 0x1234");
	sifgen_put32(d, 0x4004);
	sifgen_put64(d + 17, INT64_MAX);
	expect_fail(f, f->len, VG_EPARSE, "descriptor 2 data (offset "
	    "9223372036854775807, size 4096) out of range");
	/* unused slots are not checked */
	d[4] = 0;
	d = f->img + SIFGEN_DESCROFF + 2 * 585;
	sifgen_put32(d, 0x1234);
	expect_fail(f, f->len, VG_EPARSE, "no primary system partition (an "
	    "OCI-SIF or data-only image cannot be run)");
}

static void
test_partition_too_small(void **state)
{
	struct fix *f = *state;

	sifgen_put64(f->img + SIFGEN_DESCROFF + 585 + 25, 2);
	expect_fail(f, f->len, VG_EPARSE, "primary partition (descriptor 2) "
	    "is 2 bytes, too small for squashfs");
}

/* A 1 GB sparse image verifies without reading its data. */
static void
test_large_sparse(void **state)
{
	struct fix *f = *state;
	struct vg_err e;
	int64_t gb = 1 << 30;
	int fd;

	sifgen_put64(f->img + SIFGEN_DESCROFF + 585 + 25, gb - SIFGEN_PART_OFF);
	sifgen_put64(f->img + 120, gb - SIFGEN_DEFFILE_OFF);
	assert_int_equal(sifgen_write(f->path, f->img, f->len), 0);
	fd = open(f->path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, gb), 0);
	close(fd);
	vg_err_init(&e);
	assert_int_equal(vg_sif_verify_file(f->path, &e), 0);
}

/* Verification does not count as an access for atime-based purges. */
static void
test_noatime(void **state)
{
	struct fix *f = *state;
	struct timespec ts[2] = {
		{ .tv_sec = 1600000000 }, { .tv_sec = 1500000000 },
	};
	struct vg_err e;
	struct stat st;

	assert_int_equal(sifgen_write(f->path, f->img, f->len), 0);
	assert_int_equal(utimensat(AT_FDCWD, f->path, ts, 0), 0);
	vg_err_init(&e);
	assert_int_equal(vg_sif_verify_file(f->path, &e), 0);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_atim.tv_sec, 1600000000);
	assert_int_equal(st.st_mtim.tv_sec, 1500000000);
}

/* Runs the NULL-terminated argument list, returning its exit status. */
static int
run(const char *arg0, ...)
{
	struct vg_strv sv = VG_STRV_INIT;
	const char *a;
	va_list ap;
	pid_t pid;
	int st, fd;

	vg_strv_push(&sv, arg0);
	va_start(ap, arg0);
	while ((a = va_arg(ap, const char *)) != NULL)
		vg_strv_push(&sv, a);
	va_end(ap);
	pid = fork();
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(sv.v[0], sv.v);
		_exit(127);
	}
	vg_strv_release(&sv);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* An image written by siftool around a real squashfs passes. */
static void
test_siftool_image(void **state)
{
	struct fix *f = *state;
	char *root = vg_path_join(f->dir, "root");
	char *sq = vg_path_join(f->dir, "fs.sqsh");
	char *def = vg_path_join(f->dir, "def");
	char *hello = vg_path_join(root, "hello");
	struct vg_err e;
	int skip_it = 0;

	if (access("/usr/bin/siftool", X_OK) != 0 ||
	    access("/usr/bin/mksquashfs", X_OK) != 0)
		skip_it = 1;
	if (!skip_it) {
		assert_int_equal(mkdir(root, 0755), 0);
		assert_int_equal(sifgen_write(hello, "hi\n", 3), 0);
		assert_int_equal(sifgen_write(def, "Bootstrap: scratch\n", 19),
		    0);
		assert_int_equal(run("mksquashfs", root, sq, "-quiet",
		    "-noappend", NULL), 0);
		assert_int_equal(run("siftool", "new", f->path, NULL), 0);
		assert_int_equal(run("siftool", "add", f->path, def,
		    "--datatype", "1", NULL), 0);
		assert_int_equal(run("siftool", "add", f->path, sq,
		    "--datatype", "4", "--parttype", "2", "--partfs", "1",
		    "--partarch", "2", NULL), 0);
		vg_err_init(&e);
#if defined(__x86_64__)
		assert_int_equal(vg_sif_verify_file(f->path, &e), 0);
#endif
	}
	free(root);
	free(sq);
	free(def);
	free(hello);
	if (skip_it) {
		printf("skipped: needs /usr/bin/siftool and /usr/bin/mksquashfs\n");
		skip();
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_valid, setup, teardown),
		cmocka_unit_test(test_host_arch),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arch_mismatch, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_truncated_table, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_truncated_data, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_squashfs_magic, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_primary, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_two_primary, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fstype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descriptor_fields, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_partition_too_small,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_sparse, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_noatime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_siftool_image, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test-cache.c - the SIF cache against a real HTTP server on loopback
 * (tests/harness/sif-http.py, fetched with libcurl): one pull for many
 * concurrent resolvers, no partial image after a kill -9, corrupt and
 * expiring images pulled again, verify after a simulated purge, quota
 * eviction that keeps pinned images.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers/sifgen.h"
#include "common/buf.h"
#include "common/path.h"
#include "sif-cache/cache-int.h"
#include "sif-cache/cache.h"
#include "sif-cache/sha256.h"

struct fix {
	char		 dir[64];
	char		*srv, *cache, *log;
	pid_t		 server;
	int		 port;
	struct vg_cache	*c;
};

#define DAY 86400.0

/* Sleeps ms milliseconds. */
static void
nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Starts the HTTP server over f->srv and waits for its port. */
static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct vg_buf b = VG_BUF_INIT;
	char *portfile;
	int i;

	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-test-cache-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->srv = vg_path_join(f->dir, "srv");
	f->cache = vg_path_join(f->dir, "cache");
	f->log = vg_path_join(f->dir, "http.log");
	portfile = vg_path_join(f->dir, "port");
	mkdir(f->srv, 0755);
	f->server = fork();
	if (f->server == 0) {
		execlp("python3", "python3", "tests/harness/sif-http.py",
		    f->srv, portfile, f->log, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100; i++) {
		vg_buf_reset(&b);
		if (vg_read_file(portfile, 64, &b, NULL) == 0) {
			f->port = atoi(b.data);
			break;
		}
		nap(50);
	}
	vg_buf_release(&b);
	free(portfile);
	*state = f;
	return f->port > 0 ? 0 : -1;
}

/* Stops the server, closes the cache, removes everything. */
static int
teardown(void **state)
{
	struct fix *f = *state;

	if (f->server > 0) {
		kill(f->server, SIGTERM);
		waitpid(f->server, NULL, 0);
	}
	vg_cache_close(f->c);
	vg_rm_rf(f->dir, NULL);
	free(f->srv);
	free(f->cache);
	free(f->log);
	free(f);
	return 0;
}

/* Writes an image named name into the served directory. */
static void
serve(struct fix *f, const char *name, size_t part)
{
	char *p = vg_path_join(f->srv, name);

	assert_int_equal(sifgen_write_image(p, "02", part), 0);
	free(p);
}

/* The served URL of name (caller frees). */
static char *
url(struct fix *f, const char *name)
{
	return vg_xasprintf("http://127.0.0.1:%d/%s", f->port, name);
}

/* How many GETs of path the server logged. */
static int
get_count(struct fix *f, const char *path)
{
	struct vg_buf b = VG_BUF_INIT;
	char *want = vg_xasprintf("GET %s\n", path), *p;
	int n = 0;

	if (vg_read_file(f->log, 1 << 20, &b, NULL) == 0 && b.data != NULL)
		for (p = b.data; (p = strstr(p, want)) != NULL; p++)
			n++;
	vg_buf_release(&b);
	free(want);
	return n;
}

/* Opens the cache with a configuration (may be NULL). */
static void
open_cache(struct fix *f, const struct vg_cache_conf *conf)
{
	struct vg_err e;

	vg_cache_close(f->c);
	f->c = NULL;
	vg_err_init(&e);
	assert_int_equal(vg_cache_open(conf, f->cache, &f->c, &e), 0);
}

/* Number of directory entries (not . and ..) in cache/sub. */
static int
count(struct fix *f, const char *sub)
{
	char *p = vg_path_join(f->cache, sub);
	struct dirent *de;
	DIR *d = opendir(p);
	int n = 0;

	free(p);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The sha256 of a file. */
static void
file_digest(const char *path, char hex[65])
{
	struct vg_err e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(vg_sha256_fd(fd, path, hex, &e), 0);
	close(fd);
}

/* Sets a file's atime and mtime to t (ctime becomes now). */
static void
age(const char *path, double t)
{
	struct timespec ts[2] = { { (time_t)t, 0 }, { (time_t)t, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void
test_sha256(void **state)
{
	char hex[65];

	(void)state;
	/* FIPS 180-2 appendix B test vectors */
	vg_sha256_str("abc", hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a3"
	    "96177a9cb410ff61f20015ad");
	vg_sha256_str("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopn"
	    "opq", hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce459"
	    "64ff2167f6ecedd419db06c1");
	vg_sha256_str("", hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
	    "649b934ca495991b7852b855");
}

/* A pull, a pinned use, a second use without a pull. */
static void
test_resolve_http(void **state)
{
	struct fix *f = *state;
	struct vg_cache_pin *pin = NULL, *pin2 = NULL;
	struct vg_err e;
	char *u, *path = NULL, *path2 = NULL, *src, hex[65], want[512];

	serve(f, "a.sif", 4096);
	open_cache(f, NULL);
	u = url(f, "a.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	assert_non_null(pin);
	src = vg_path_join(f->srv, "a.sif");
	file_digest(src, hex);
	snprintf(want, sizeof(want), "%s/sha256/%s.sif", f->cache, hex);
	assert_string_equal(path, want);
	assert_int_equal(vg_sif_verify_file(path, &e), 0);
	assert_int_equal(count(f, "pins"), 1);
	assert_int_equal(count(f, "tmp"), 0);
	assert_int_equal(get_count(f, "/a.sif"), 1);
	/* again: no pull, a second pin */
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path2, &pin2, &e), 0);
	assert_string_equal(path2, path);
	assert_int_equal(get_count(f, "/a.sif"), 1);
	assert_int_equal(count(f, "pins"), 2);
	vg_cache_unpin(pin);
	vg_cache_unpin(pin2);
	assert_int_equal(count(f, "pins"), 0);
	/* pinned by digest: found without any request */
	free(u);
	u = vg_xasprintf("http://127.0.0.1:%d/other-name.sif@sha256:%s",
	    f->port, hex);
	free(path2);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path2, &pin2, &e), 0);
	assert_string_equal(path2, path);
	assert_int_equal(get_count(f, "/other-name.sif"), 0);
	vg_cache_unpin(pin2);
	free(u);
	free(src);
	free(path);
	free(path2);
}

/* Failed pulls leave nothing behind and say why. */
static void
test_pull_errors(void **state)
{
	struct fix *f = *state;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *u, *path = NULL, want[512], *p;

	open_cache(f, NULL);
	serve(f, "a.sif", 4096);
	/* digest mismatch */
	u = vg_xasprintf("http://127.0.0.1:%d/a.sif@sha256:%064d", f->port, 0);
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e),
	    VG_EDENIED);
	assert_null(path);
	assert_null(pin);
	assert_non_null(strstr(e.msg, ", not the pinned 0000000000"));
	free(u);
	/* 404 */
	u = url(f, "nope.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e),
	    VG_EBACKEND);
	snprintf(want, sizeof(want), "cannot fetch '%s': The requested URL "
	    "returned error: 404", u);
	assert_string_equal(e.msg, want);
	free(u);
	/* not a SIF */
	p = vg_path_join(f->srv, "text.sif");
	assert_int_equal(sifgen_write(p, "hello\n", 6), 0);
	free(p);
	u = url(f, "text.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e),
	    VG_EPARSE);
	snprintf(want, sizeof(want), "pulled image is not usable: '%s': file "
	    "is 6 bytes, shorter than the 128-byte SIF header (truncated?)",
	    u);
	assert_string_equal(e.msg, want);
	free(u);
	assert_int_equal(count(f, "sha256"), 0);
	assert_int_equal(count(f, "tmp"), 0);
	assert_int_equal(count(f, "pins"), 0);
	assert_int_equal(count(f, "locks"), 0);
}

/* References that are not pulled over HTTP. */
static void
test_refs(void **state)
{
	struct fix *f = *state;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *path = NULL, *local, want[512];

	open_cache(f, NULL);
	local = vg_path_join(f->srv, "local.sif");
	serve(f, "local.sif", 4096);
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, local, 0, &path, &pin, &e), 0);
	assert_string_equal(path, local);
	assert_null(pin);
	free(path);
	path = NULL;
	assert_int_equal(unlink(local), 0);
	assert_int_equal(vg_cache_resolve(f->c, local, 0, &path, &pin, &e),
	    VG_ENOENT);
	free(local);
	assert_int_equal(vg_cache_resolve(f->c, "ftp://x/y.sif", 0, &path,
	    &pin, &e), VG_EINVAL);
	assert_string_equal(e.msg, "image reference 'ftp://x/y.sif': "
	    "unsupported scheme (valid: docker://, oras://, library://, "
	    "https://, http://, or a local .sif path)");
	assert_int_equal(vg_cache_resolve(f->c, "https://x/y.sif@sha256:12",
	    0, &path, &pin, &e), VG_EINVAL);
	assert_string_equal(e.msg, "image reference 'https://x/y.sif@sha256:"
	    "12': expected 64 lowercase hex digits after '@sha256:'");
	assert_int_equal(vg_cache_resolve(f->c, "docker://a b", 0, &path,
	    &pin, &e), VG_EINVAL);
	assert_string_equal(e.msg, "image reference 'docker://a b' contains "
	    "a space or control character");
	vg_cache_set_puller(f->c, "/nonexistent/apptainer");
	assert_int_equal(vg_cache_resolve(f->c, "docker://alpine:3", 0, &path,
	    &pin, &e), VG_EUNSUPPORTED);
	snprintf(want, sizeof(want), "cannot pull 'docker://alpine:3': the "
	    "configured puller is not an executable");
	assert_string_equal(e.msg, want);
	assert_null(path);
	assert_int_equal(count(f, "locks"), 0);
}

/* A puller that exits non-zero is reported with its last stderr line. */
static void
test_puller_failure(void **state)
{
	struct fix *f = *state;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *path = NULL, *script, want[1024];

	open_cache(f, NULL);
	script = vg_path_join(f->dir, "fake-puller");
	assert_int_equal(sifgen_write(script, "#!/bin/sh\necho progress >&2\n"
	    "echo \"FATAL: no such image $3\" >&2\nexit 255\n", 72), 0);
	chmod(script, 0755);
	vg_cache_set_puller(f->c, script);
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, "docker://nope:1", 0, &path,
	    &pin, &e), VG_EBACKEND);
	snprintf(want, sizeof(want), "'%s pull' of 'docker://nope:1' failed "
	    "(exit 255): FATAL: no such image docker://nope:1", script);
	assert_string_equal(e.msg, want);
	assert_int_equal(count(f, "tmp"), 0);
	free(script);
}

/* A truncated or damaged cached image is pulled again, never used. */
static void
test_corrupt_repulled(void **state)
{
	struct fix *f = *state;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	struct stat st;
	char *u, *path = NULL, *path2 = NULL;

	serve(f, "a.sif", 8192);
	open_cache(f, NULL);
	u = url(f, "a.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	vg_cache_unpin(pin);
	assert_int_equal(truncate(path, 10000), 0);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path2, &pin, &e), 0);
	assert_string_equal(path, path2);
	assert_int_equal(get_count(f, "/a.sif"), 2);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, SIFGEN_PART_OFF + 8192);
	assert_int_equal(vg_sif_verify_file(path, &e), 0);
	vg_cache_unpin(pin);
	/* damaged magic */
	assert_int_equal(sifgen_write(path, "junk", 4), 0);
	free(path2);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path2, &pin, &e), 0);
	assert_int_equal(get_count(f, "/a.sif"), 3);
	assert_int_equal(vg_sif_verify_file(path2, &e), 0);
	vg_cache_unpin(pin);
	free(u);
	free(path);
	free(path2);
}

/* An image near its purge is pulled afresh; a fresh one is kept. */
static void
test_expiring_refreshed(void **state)
{
	struct fix *f = *state;
	struct vg_cache_conf conf = { .purge = { .age = 0 } };
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	struct stat st;
	char *u, *path = NULL, preset[] = "pawsey";
	double now = vg_now();

	conf.purge.preset = preset;
	serve(f, "a.sif", 4096);
	open_cache(f, &conf);
	u = url(f, "a.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	vg_cache_unpin(pin);
	/* accessed 15 days ago: eligible in 6 days; a 7-day need expires */
	age(path, now - 15 * DAY);
	free(path);
	assert_int_equal(vg_cache_resolve(f->c, u, now + 2 * DAY, &path, &pin,
	    &e), 0);
	vg_cache_unpin(pin);
	assert_int_equal(get_count(f, "/a.sif"), 1);
	free(path);
	assert_int_equal(vg_cache_resolve(f->c, u, now + 5.5 * DAY, &path,
	    &pin, &e), 0);
	vg_cache_unpin(pin);
	assert_int_equal(get_count(f, "/a.sif"), 2);
	assert_int_equal(stat(path, &st), 0);
	assert_true((double)st.st_atim.tv_sec > now - 60);
	/* a need beyond the purge age cannot be met by pulling again */
	free(path);
	assert_int_equal(vg_cache_resolve(f->c, u, now + 30 * DAY, &path,
	    &pin, &e), 0);
	vg_cache_unpin(pin);
	assert_int_equal(get_count(f, "/a.sif"), 2);
	free(path);
	free(u);
}

/* Resolves url in a child process; exits 0 on success. */
static pid_t
child_resolve(struct fix *f, const char *u, double lease)
{
	struct vg_cache_conf conf = { .lock_lease = lease, .lock_wait = 60 };
	struct vg_cache_pin *pin = NULL;
	struct vg_cache *c = NULL;
	struct vg_err e;
	char *path = NULL;
	pid_t pid;
	int rc;

	pid = fork();
	if (pid != 0)
		return pid;
	vg_err_init(&e);
	if (vg_cache_open(&conf, f->cache, &c, &e) != 0)
		_exit(2);
	rc = vg_cache_resolve(c, u, 0, &path, &pin, &e);
	if (rc == 0)
		rc = vg_sif_verify_file(path, &e);
	if (rc != 0)
		fprintf(stderr, "child: %s\n", e.msg);
	/* valgrind checks the child's leaks too */
	vg_cache_unpin(pin);
	free(path);
	vg_cache_close(c);
	_exit(rc == 0 ? 0 : 1);
}

/* Eight processes needing one image cause exactly one pull. */
static void
test_concurrent_one_pull(void **state)
{
	struct fix *f = *state;
	pid_t pids[8];
	char u[128];
	int i, st[8];

	serve(f, "big.sif", 64 * 1024);	/* 16 slow pieces: 1.6 s */
	open_cache(f, NULL);
	/* on the stack: a child's copy of a heap string would be its leak */
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/slow/big.sif", f->port);
	for (i = 0; i < 8; i++)
		pids[i] = child_resolve(f, u, 60);
	/* all are reaped before any check fails (and the fixture goes) */
	for (i = 0; i < 8; i++)
		assert_int_equal(waitpid(pids[i], &st[i], 0), pids[i]);
	for (i = 0; i < 8; i++) {
		assert_true(WIFEXITED(st[i]));
		assert_int_equal(WEXITSTATUS(st[i]), 0);
	}
	assert_int_equal(get_count(f, "/slow/big.sif"), 1);
	assert_int_equal(count(f, "sha256"), 1);
	assert_int_equal(count(f, "tmp"), 0);
	assert_int_equal(count(f, "locks"), 0);
}

/* kill -9 of the puller: no image under a final name; lock recovered. */
static void
test_killed_puller(void **state)
{
	struct fix *f = *state;
	struct vg_cache_gc_stats gs;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *u, *path = NULL;
	pid_t pid;
	int i, st;

	serve(f, "big.sif", 64 * 1024);
	open_cache(f, NULL);
	u = url(f, "slow/big.sif");
	pid = child_resolve(f, u, 600);
	/* wait until the transfer is under way */
	for (i = 0; i < 100 && count(f, "tmp") < 1; i++)
		nap(50);
	nap(300);
	assert_int_equal(count(f, "tmp"), 1);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(count(f, "sha256"), 0);
	assert_int_equal(count(f, "tmp"), 1);
	assert_int_equal(count(f, "locks"), 1);
	/* the lease (600 s) has not run out, but the holder is dead */
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	assert_int_equal(vg_sif_verify_file(path, &e), 0);
	assert_int_equal(get_count(f, "/slow/big.sif"), 2);
	assert_int_equal(count(f, "locks"), 0);
	vg_cache_unpin(pin);
	/* gc sweeps the dead puller's partial file */
	assert_int_equal(vg_cache_gc(f->c, 0, NULL, NULL, &gs, &e), 0);
	assert_int_equal(count(f, "tmp"), 0);
	assert_int_equal(count(f, "sha256"), 1);
	free(path);
	free(u);
}

struct findings {
	int		n;
	char		what[8][16];
	char		detail[8][512];
};

/* Collects verify findings. */
static void
collect(void *arg, const struct vg_cache_entry *ent,
    enum vg_cache_problem what, const char *detail)
{
	static const char *names[] = { "ok", "missing", "corrupt",
	    "unrecorded", "expiring" };
	struct findings *fs = arg;

	(void)ent;
	if (fs->n < 8) {
		snprintf(fs->what[fs->n], 16, "%s", names[what]);
		snprintf(fs->detail[fs->n], 512, "%s", detail);
		fs->n++;
	}
}

/* Pulls name and returns the cached path (caller frees). */
static char *
pull(struct fix *f, const char *name)
{
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *u = url(f, name), *path = NULL;

	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	vg_cache_unpin(pin);
	free(u);
	return path;
}

/* verify after files were deleted, aged and damaged behind our back. */
static void
test_verify_reconciles(void **state)
{
	struct fix *f = *state;
	struct vg_cache_conf conf = { .lock_wait = 10 };
	struct findings fs;
	struct vg_err e;
	char *a, *b, *cimg, *copy, *src, hex[65], preset[] = "nersc";
	size_t n;
	double now = vg_now();

	conf.purge.preset = preset;
	serve(f, "a.sif", 4096);
	serve(f, "b.sif", 8192);
	serve(f, "c.sif", 12288);
	open_cache(f, &conf);
	a = pull(f, "a.sif");
	b = pull(f, "b.sif");
	cimg = pull(f, "c.sif");
	assert_int_equal(unlink(a), 0);			/* purged */
	age(b, now - 60 * DAY);			/* nearly purged */
	assert_int_equal(truncate(cimg, 100), 0);	/* damaged */
	/* an image that arrived without vigil's records */
	serve(f, "d.sif", 16384);
	src = vg_path_join(f->srv, "d.sif");
	file_digest(src, hex);
	copy = vg_xasprintf("%s/sha256/%s.sif", f->cache, hex);
	assert_int_equal(rename(src, copy), 0);
	free(src);

	memset(&fs, 0, sizeof(fs));
	vg_err_init(&e);
	assert_int_equal(vg_cache_verify(f->c, 0, collect, &fs, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(fs.n, 4);
	/* sorted by digest: check by kind */
	{
		int seen[5] = { 0 }, i;

		for (i = 0; i < fs.n; i++) {
			if (strcmp(fs.what[i], "missing") == 0) {
				assert_string_equal(fs.detail[i], "image is "
				    "gone (purged or removed outside vigil); "
				    "records removed");
				seen[1]++;
			} else if (strcmp(fs.what[i], "corrupt") == 0) {
				assert_non_null(strstr(fs.detail[i], "file "
				    "is 100 bytes, shorter than the 128-byte "
				    "SIF header (truncated?); removed"));
				seen[2]++;
			} else if (strcmp(fs.what[i], "unrecorded") == 0) {
				assert_string_equal(fs.detail[i], "record "
				    "added");
				seen[3]++;
			} else if (strcmp(fs.what[i], "expiring") == 0) {
				assert_non_null(strstr(fs.detail[i], "eligible "
				    "for purge at "));
				seen[4]++;
			}
		}
		assert_int_equal(seen[1] + seen[2] + seen[3] + seen[4], 4);
		assert_int_equal(seen[1] * seen[2] * seen[3] * seen[4], 1);
	}
	assert_int_equal(access(cimg, F_OK), -1);
	/* reconciled: a second verify finds only the expiring image */
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(vg_cache_verify(f->c, 0, collect, &fs, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_string_equal(fs.what[0], "expiring");
	/* refresh pulls it afresh */
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(vg_cache_verify(f->c, 1, collect, &fs, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(fs.detail[0], "; pulled again from "));
	assert_int_equal(get_count(f, "/b.sif"), 2);
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(vg_cache_verify(f->c, 0, collect, &fs, &n, &e), 0);
	assert_int_equal(n, 0);
	free(a);
	free(b);
	free(cimg);
	free(copy);
}

/* Quota eviction: least recently used first, pinned images kept. */
static void
test_gc_quota_keeps_pinned(void **state)
{
	struct fix *f = *state;
	struct vg_cache_conf conf = { .quota_entries = 1 };
	struct vg_cache_gc_stats gs;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *a, *b, *cimg, *u, *path = NULL;

	serve(f, "a.sif", 4096);
	serve(f, "b.sif", 8192);
	serve(f, "c.sif", 12288);
	open_cache(f, &conf);
	a = pull(f, "a.sif");
	nap(20);
	b = pull(f, "b.sif");
	nap(20);
	cimg = pull(f, "c.sif");
	/* a is the oldest, but in use */
	u = url(f, "a.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	/* dry run: plans, removes nothing */
	assert_int_equal(vg_cache_gc(f->c, 1, NULL, NULL, &gs, &e), 0);
	assert_int_equal(gs.entries, 3);
	assert_int_equal(gs.removed, 2);
	assert_int_equal(gs.pinned, 1);
	assert_int_equal(count(f, "sha256"), 3);
	assert_int_equal(vg_cache_gc(f->c, 0, NULL, NULL, &gs, &e), 0);
	assert_int_equal(gs.removed, 2);
	assert_int_equal(gs.freed, 2 * SIFGEN_PART_OFF + 8192 + 12288);
	assert_int_equal(access(a, F_OK), 0);
	assert_int_equal(access(b, F_OK), -1);
	assert_int_equal(access(cimg, F_OK), -1);
	/* the pinned one goes once released */
	vg_cache_unpin(pin);
	conf.quota_entries = 0;
	conf.quota_bytes = 1;
	open_cache(f, &conf);
	assert_int_equal(vg_cache_gc(f->c, 0, NULL, NULL, &gs, &e), 0);
	assert_int_equal(gs.removed, 1);
	assert_int_equal(count(f, "sha256"), 0);
	assert_int_equal(count(f, "refs"), 0);
	free(a);
	free(b);
	free(cimg);
	free(u);
	free(path);
}

/* LRU by vigil's record: the least recently resolved goes first. */
static void
test_gc_lru(void **state)
{
	struct fix *f = *state;
	struct vg_cache_conf conf = { .quota_entries = 2 };
	struct vg_cache_gc_stats gs;
	struct vg_err e;
	char *a, *b, *cimg;

	serve(f, "a.sif", 4096);
	serve(f, "b.sif", 8192);
	serve(f, "c.sif", 12288);
	open_cache(f, &conf);
	a = pull(f, "a.sif");
	nap(20);
	b = pull(f, "b.sif");
	nap(20);
	cimg = pull(f, "c.sif");
	nap(20);
	free(a);
	a = pull(f, "a.sif");		/* used again: b is the oldest */
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 0, NULL, NULL, &gs, &e), 0);
	assert_int_equal(gs.removed, 1);
	assert_int_equal(access(a, F_OK), 0);
	assert_int_equal(access(b, F_OK), -1);
	assert_int_equal(access(cimg, F_OK), 0);
	free(a);
	free(b);
	free(cimg);
}

/* gc removes images the site purge would take within the margin. */
static void
test_gc_purge(void **state)
{
	struct fix *f = *state;
	struct vg_cache_conf conf = { .quota_entries = 0 };
	struct vg_cache_gc_stats gs;
	struct vg_err e;
	char *a, *b, preset[] = "olcf", da[65], db[65];
	struct timespec ts[2];
	double now = vg_now();

	conf.purge.preset = preset;
	serve(f, "a.sif", 4096);
	serve(f, "b.sif", 8192);
	open_cache(f, &conf);
	a = pull(f, "a.sif");
	b = pull(f, "b.sif");
	/* both pulled long ago (recorded), b accessed yesterday */
	vg_err_init(&e);
	snprintf(da, sizeof(da), "%.64s", strrchr(a, '/') + 1);
	snprintf(db, sizeof(db), "%.64s", strrchr(b, '/') + 1);
	assert_int_equal(cache_rec_update(f->c, da, -1, now - 100 * DAY, 0,
	    0, &e), 0);
	assert_int_equal(cache_rec_update(f->c, db, -1, now - 100 * DAY, 0,
	    0, &e), 0);
	age(a, now - 100 * DAY);
	ts[0].tv_sec = (time_t)(now - DAY), ts[0].tv_nsec = 0;
	ts[1].tv_sec = (time_t)(now - 100 * DAY), ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, b, ts, 0), 0);
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 0, NULL, NULL, &gs, &e), 0);
	assert_int_equal(gs.removed, 1);
	assert_int_equal(access(a, F_OK), -1);
	assert_int_equal(access(b, F_OK), 0);
	free(a);
	free(b);
}

/* rm by reference or digest prefix; pinned images need --force. */
static void
test_rm(void **state)
{
	struct fix *f = *state;
	struct vg_cache_pin *pin = NULL;
	struct vg_err e;
	char *a, *b, *u, *path = NULL, *base, prefix[13];

	serve(f, "a.sif", 4096);
	serve(f, "b.sif", 8192);
	open_cache(f, NULL);
	a = pull(f, "a.sif");
	b = pull(f, "b.sif");
	u = url(f, "a.sif");
	vg_err_init(&e);
	assert_int_equal(vg_cache_rm(f->c, u, 0, &e), 0);
	assert_int_equal(access(a, F_OK), -1);
	assert_int_equal(vg_cache_rm(f->c, u, 0, &e), VG_ENOENT);
	assert_non_null(strstr(e.msg, "no cached image matches"));
	base = strrchr(b, '/') + 1;
	memcpy(prefix, base, 12);
	prefix[12] = '\0';
	free(u);
	u = url(f, "b.sif");
	assert_int_equal(vg_cache_resolve(f->c, u, 0, &path, &pin, &e), 0);
	assert_int_equal(vg_cache_rm(f->c, prefix, 0, &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "is in use by 1 running task "
	    "(pinned); --force removes it anyway"));
	assert_int_equal(vg_cache_rm(f->c, prefix, 1, &e), 0);
	assert_int_equal(access(b, F_OK), -1);
	vg_cache_unpin(pin);
	assert_int_equal(count(f, "sha256"), 0);
	free(a);
	free(b);
	free(u);
	free(path);
}

/* The directory: conf, then $VIGIL_SIF_CACHE, then the default. */
static void
test_open_dir(void **state)
{
	struct fix *f = *state;
	struct vg_cache *c = NULL;
	struct vg_err e;
	char *envdir = vg_path_join(f->dir, "env");

	vg_err_init(&e);
	unsetenv("VIGIL_SIF_CACHE");
	assert_int_equal(vg_cache_open(NULL, NULL, &c, &e), VG_EINVAL);
	assert_string_equal(e.msg, "no SIF cache directory: set cache.dir or "
	    "$VIGIL_SIF_CACHE");
	setenv("VIGIL_SIF_CACHE", envdir, 1);
	assert_int_equal(vg_cache_open(NULL, f->cache, &c, &e), 0);
	assert_string_equal(vg_cache_dir(c), envdir);
	vg_cache_close(c);
	unsetenv("VIGIL_SIF_CACHE");
	free(envdir);
}

/* The default directory is <scratch base>/vigil-sif-cache, looked for
 * only when neither cache.dir nor $VIGIL_SIF_CACHE is set. */
static void
test_open_default(void **state)
{
	struct fix *f = *state;
	struct vg_scratch_conf sc = { 0 };
	struct vg_cache_conf cc;
	struct vg_cache *c = NULL;
	struct vg_err e;
	char *base = vg_path_join(f->dir, "scr"), *want, *real;

	vg_err_init(&e);
	unsetenv("VIGIL_SIF_CACHE");
	sc.path = base;
	assert_int_equal(vg_cache_open_default(NULL, &sc, &c, &e), 0);
	real = realpath(base, NULL);
	want = vg_path_join(real, VG_CACHE_DEFAULT_NAME);
	assert_string_equal(vg_cache_dir(c), want);
	vg_cache_close(c);
	free(want);
	free(real);

	/* an unusable scratch base does not matter when the dir is set */
	memset(&cc, 0, sizeof(cc));
	cc.dir = f->cache;
	sc.path = (char *)(uintptr_t)"relative/path";
	assert_int_equal(vg_cache_open_default(&cc, &sc, &c, &e), 0);
	assert_string_equal(vg_cache_dir(c), f->cache);
	vg_cache_close(c);
	assert_int_not_equal(vg_cache_open_default(NULL, &sc, &c, &e), 0);
	assert_null(c);
	assert_non_null(strstr(e.msg, "SIF cache: no cache.dir or "
	    "$VIGIL_SIF_CACHE, and no scratch base for the default: "));
	free(base);
}

/* The warning for a cache on scratch without a purge rule. */
static void
test_purge_warning(void **state)
{
	struct fix *f = *state;
	struct vg_cache_conf cc;
	struct vg_cache *c = NULL;
	struct vg_err e;
	char *scr = vg_path_join(f->dir, "scr"), *dir, *want;
	const char *old = getenv("SCRATCH");
	char *saved = old != NULL ? vg_xstrdup(old) : NULL;

	vg_err_init(&e);
	dir = vg_path_join(scr, "cache");
	memset(&cc, 0, sizeof(cc));
	cc.dir = dir;
	unsetenv("SCRATCH");
	unsetenv("PSCRATCH");
	unsetenv("VIGIL_SCRATCH");
	assert_int_equal(vg_cache_open(&cc, NULL, &c, &e), 0);
	assert_null(vg_cache_purge_warning(c));
	vg_cache_close(c);

	setenv("SCRATCH", scr, 1);
	assert_int_equal(vg_cache_open(&cc, NULL, &c, &e), 0);
	want = vg_xasprintf("SIF cache '%s' is on a scratch file system "
	    "($SCRATCH) but no purge policy is set: images may be purged "
	    "under running tasks; set cache.purge (a site preset such as "
	    "nersc, or {age, clock}, or none)", dir);
	assert_string_equal(vg_cache_purge_warning(c), want);
	vg_cache_close(c);
	free(want);

	/* a prefix that is not a path component does not count */
	want = vg_xasprintf("%sx", scr);
	cc.dir = want;
	assert_int_equal(vg_cache_open(&cc, NULL, &c, &e), 0);
	assert_null(vg_cache_purge_warning(c));
	vg_cache_close(c);
	free(want);

	/* any rule, none included, silences it */
	setenv("SCRATCH", scr, 1);
	cc.dir = dir;
	cc.purge.preset = (char *)(uintptr_t)"none";
	assert_int_equal(vg_cache_open(&cc, NULL, &c, &e), 0);
	assert_null(vg_cache_purge_warning(c));
	vg_cache_close(c);
	cc.purge.preset = NULL;
	cc.purge.age = 86400;
	assert_int_equal(vg_cache_open(&cc, NULL, &c, &e), 0);
	assert_null(vg_cache_purge_warning(c));
	vg_cache_close(c);

	if (saved != NULL)
		setenv("SCRATCH", saved, 1);
	else
		unsetenv("SCRATCH");
	free(saved);
	free(dir);
	free(scr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test_setup_teardown(test_open_default, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_purge_warning, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resolve_http, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pull_errors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_puller_failure, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_repulled, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_expiring_refreshed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_one_pull, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_killed_puller, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_verify_reconciles, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_gc_quota_keeps_pinned,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_lru, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_purge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_dir, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

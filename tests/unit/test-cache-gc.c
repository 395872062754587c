/*
 * test-cache-gc.c - gc planning over hand-made caches: the compact
 * planner (gc.c) against the plan computed from a model of every entry
 * (vg_evict_plan), with ties, duplicate and malformed record lines,
 * missing and unrecorded images, images near the purge age, live and
 * dead pins; the record line parser; and gc's errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/path.h"
#include "sif-cache/cache-int.h"
#include "sif-cache/cache.h"
#include "sif-cache/evict.h"
#include "sif-cache/lock.h"
#include "sif-cache/sha256.h"

#define DAY	86400.0
#define AGE	(30 * 86400)		/* purge age of the tests */

struct fix {
	char		 dir[64];
	char		*cache;
	struct vg_cache	*c;
};

/* What the test knows about one entry. */
struct model {
	char		 digest[65];
	int		 image, record, pinned, ref;
	uint64_t	 size;		/* as gc sees it */
	double		 last_use;
	double		 purge_at;	/* as gc sees it */
};

/* One gc report. */
struct seen {
	char		 digest[65];
	enum vg_cache_evict_why why;
	uint64_t	 size;
};

struct seen_list {
	struct seen	*v;
	size_t		 n, cap;
};

/* Makes a temporary directory for the cache. */
static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-test-cache-gc-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->cache = vg_path_join(f->dir, "cache");
	*state = f;
	return 0;
}

/* Closes the cache and removes everything. */
static int
teardown(void **state)
{
	struct fix *f = *state;

	vg_cache_close(f->c);
	vg_rm_rf(f->dir, NULL);
	free(f->cache);
	free(f);
	return 0;
}

/* (Re)opens the cache with the tests' purge rule and the given quota. */
static void
open_cache(struct fix *f, uint64_t quota_bytes, uint64_t quota_entries)
{
	struct vg_cache_conf conf = { .quota_bytes = quota_bytes,
	    .quota_entries = quota_entries };
	char clock[] = "mtime";
	struct vg_err e;

	conf.dir = f->cache;
	conf.purge.age = AGE;
	conf.purge.clock = clock;
	conf.purge.margin = (uint64_t)DAY;
	vg_cache_close(f->c);
	f->c = NULL;
	vg_err_init(&e);
	assert_int_equal(vg_cache_open(&conf, NULL, &f->c, &e), 0);
}

/* Writes size bytes to the image of digest, its mtime set to mtime. */
static void
make_image(struct fix *f, const char *digest, size_t size, double mtime)
{
	char *path = vg_xasprintf("%s/sha256/%s.sif", f->cache, digest);
	struct timespec ts[2];
	char buf[512] = { 0 };
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)mtime;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	free(path);
}

/* Creates an empty file under the cache. */
static void
touch(struct fix *f, const char *sub)
{
	char *path = vg_path_join(f->cache, sub);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	close(fd);
	free(path);
}

/* Collects gc reports. */
static void
collect(void *arg, const struct vg_cache_entry *ent,
    enum vg_cache_evict_why why)
{
	struct seen_list *l = arg;

	l->v = vg_xgrow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	memcpy(l->v[l->n].digest, ent->digest, 65);
	l->v[l->n].why = why;
	l->v[l->n].size = ent->size;
	l->n++;
	/* the path is made for reported entries only */
	assert_non_null(ent->path);
	assert_non_null(strstr(ent->path, ent->digest));
}

/* Orders models by digest. */
static int
by_digest(const void *a, const void *b)
{
	return strcmp(((const struct model *)a)->digest,
	    ((const struct model *)b)->digest);
}

/*
 * A cache of n entries of every kind, written as gc's input, with m
 * (sorted by digest) saying what gc must make of each.  now is whole
 * seconds, as file times are.
 */
static void
build(struct fix *f, struct model *m, size_t n, double now)
{
	static const double uses[] = { 1, 2, 2, 3, 5, 8, 8, 8, 13 };
	struct vg_buf shard[256];
	char key[32], ref[65], *path, *pin, *text;
	size_t i;
	int kind, b;
	double pulled, mtime;

	memset(shard, 0, sizeof(shard));
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "image %zu", i);
		vg_sha256_str(key, m[i].digest);
		b = vg_hexval(m[i].digest[0]) << 4 | vg_hexval(m[i].digest[1]);
		kind = rand() % 20;
		m[i].image = kind != 0;		/* record only: missing */
		m[i].record = kind != 1;	/* image only */
		m[i].pinned = kind == 2 || kind == 3;
		m[i].size = (uint64_t)(rand() % 5000);
		m[i].last_use = now - uses[rand() % 9] * DAY;
		m[i].purge_at = INFINITY;
		pulled = now - 2 * DAY;
		mtime = now - 2 * DAY;
		if (kind == 3 || kind == 4) {
			/* pulled long ago, still old: purged unless pinned */
			pulled = mtime = now - 40 * DAY;
		} else if (kind == 5) {
			/* pulled long ago, clocks moved on since */
			pulled = now - 40 * DAY;
		} else if (kind == 1 && rand() % 2) {
			mtime = now - 31 * DAY;
		}
		if (m[i].image) {
			make_image(f, m[i].digest, (size_t)(i % 7) * 50,
			    mtime);
			if (!m[i].record || pulled + AGE <= now + DAY) {
				/* stat()ed: the file decides */
				m[i].size = (uint64_t)(i % 7) * 50;
				m[i].purge_at = mtime + AGE;
			}
			if (!m[i].record)
				m[i].last_use = mtime;
		}
		if (m[i].record && kind == 9)	/* parsed by strtod */
			vg_buf_printf(&shard[b], "%s +%llu %.1f %.0f\n",
			    m[i].digest, (unsigned long long)(m[i].size),
			    pulled, m[i].last_use);
		else if (m[i].record)
			vg_buf_printf(&shard[b], "%s %llu %.3f %.3f\n",
			    m[i].digest, (unsigned long long)(m[i].size),
			    pulled, m[i].last_use);
		if (kind == 6)	/* a later duplicate does not count */
			vg_buf_printf(&shard[b], "%s 7 %.3f %.3f\n",
			    m[i].digest, pulled, now);
		if (kind == 7)	/* in the wrong shard: skipped */
			vg_buf_printf(&shard[(b + 1) & 255], "%s 9 %.3f "
			    "%.3f\n", m[i].digest, pulled, now - 99 * DAY);
		if ((m[i].ref = i % 3 == 0)) {
			/* a reference record: removed with the image */
			snprintf(key, sizeof(key), "ref %zu", i);
			vg_sha256_str(key, ref);
			path = vg_xasprintf("%s/refs/%s.ref", f->cache, ref);
			text = vg_xasprintf("ref docker://x/%zu\ndigest %s\n"
			    "pulled %.3f\n", i, m[i].digest, pulled);
			assert_int_equal(cache_write_atomic(path, text,
			    strlen(text), NULL), 0);
			free(text);
			free(path);
		}
		if (m[i].pinned) {
			pin = vg_xasprintf("pins/%s.%s.%ld.%.0f.1",
			    m[i].digest, vg_lock_hostname(), (long)getpid(),
			    now + DAY);
			touch(f, pin);
			free(pin);
		}
		if (kind == 8) {
			/* a dead pin: another node's, expired */
			pin = vg_xasprintf("pins/%s.elsewhere.example.1.%.0f.1",
			    m[i].digest, now - 60);
			touch(f, pin);
			free(pin);
		}
	}
	for (b = 0; b < 256; b++) {
		/* lines that are not records */
		vg_buf_printf(&shard[b], "garbage\n\n%.64s 1 2 3\n",
		    "ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"
		    "0123456789");
		path = vg_xasprintf("%s/entries/%02x.rec", f->cache, b);
		assert_int_equal(cache_write_atomic(path, vg_buf_str(&shard[b]),
		    shard[b].len, NULL), 0);
		free(path);
		vg_buf_release(&shard[b]);
	}
	qsort(m, n, sizeof(*m), by_digest);
}

/* Checks gc's dry run against vg_evict_plan over the model. */
static void
check_plan(struct fix *f, struct model *m, size_t n, uint64_t qb,
    uint64_t qe, double now)
{
	struct vg_evict_item *items = calloc(n, sizeof(*items));
	struct vg_cache_gc_stats want, got;
	struct seen_list l = { NULL, 0, 0 };
	struct vg_err e;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		items[i].last_use = m[i].last_use;
		items[i].purge_at = m[i].purge_at;
		items[i].size = m[i].size;
		items[i].pinned = m[i].pinned;
		items[i].missing = !m[i].image;
	}
	assert_int_equal(vg_evict_plan(items, n, qb, qe, now, DAY, &want, &e),
	    0);
	open_cache(f, qb, qe);
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 1, collect, &l, &got, &e), 0);
	for (i = 0; i < n; i++) {
		if (items[i].why == VG_EVICT_KEEP)
			continue;
		if (k >= l.n)
			fail_msg("gc did not report %s (%d)", m[i].digest,
			    items[i].why);
		if (strcmp(l.v[k].digest, m[i].digest) != 0 ||
		    l.v[k].why != items[i].why)
			fail_msg("report %zu: %s (%d), expected %s (%d)", k,
			    l.v[k].digest, l.v[k].why, m[i].digest,
			    items[i].why);
		assert_int_equal(l.v[k].size, m[i].size);
		k++;
	}
	assert_int_equal(l.n, k);
	assert_int_equal(got.entries, want.entries);
	assert_int_equal(got.removed, want.removed);
	assert_int_equal(got.pinned, want.pinned);
	assert_int_equal(got.bytes, want.bytes);
	assert_int_equal(got.freed, want.freed);
	assert_int_equal(got.over_quota, want.over_quota);
	free(l.v);
	free(items);
}

/* The plan equals the model's under quotas in entries, bytes, both. */
static void
test_gc_plan_matches_model(void **state)
{
	struct fix *f = *state;
	size_t n = 1500;
	struct model *m = calloc(n, sizeof(*m));
	double now = floor(vg_now());
	uint64_t total = 0;
	size_t i, live = 0;

	srand(7);
	open_cache(f, 0, 0);
	build(f, m, n, now);
	for (i = 0; i < n; i++) {
		if (m[i].image) {
			total += m[i].size;
			live++;
		}
	}
	check_plan(f, m, n, 0, 0, now);
	check_plan(f, m, n, 0, live / 2, now);
	check_plan(f, m, n, total / 3, 0, now);
	check_plan(f, m, n, total / 2, live / 3, now);
	check_plan(f, m, n, 1, 1, now);		/* pinned keep it over */
	free(m);
}

/*
 * How many reference records name an entry that was removed (gone) or
 * not (!gone).
 */
static size_t
refs_naming(struct fix *f, const struct model *m, size_t n, int gone)
{
	char *dir = vg_path_join(f->cache, "refs"), *path, *p;
	struct vg_buf b = VG_BUF_INIT;
	struct dirent *de;
	size_t i, hits = 0, kept = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		path = vg_path_join(dir, de->d_name);
		vg_buf_reset(&b);
		assert_int_equal(vg_read_file(path, 4096, &b, NULL), 0);
		free(path);
		assert_non_null(p = strstr(b.data, "\ndigest "));
		for (i = 0; i < n; i++) {
			if (strncmp(p + 8, m[i].digest, 64) != 0)
				continue;
			if (m[i].image == -1)
				hits++;
			else
				kept++;
		}
	}
	closedir(d);
	vg_buf_release(&b);
	free(dir);
	return gone ? hits : kept;
}

/* A real gc removes what the dry run reported, and nothing else. */
static void
test_gc_removes_plan(void **state)
{
	struct fix *f = *state;
	size_t n = 60, i, k = 0;
	struct model *m = calloc(n, sizeof(*m));
	struct seen_list dry = { NULL, 0, 0 }, real = { NULL, 0, 0 };
	struct vg_cache_gc_stats gs;
	struct vg_err e;
	double now = floor(vg_now());
	char *path;

	srand(11);
	open_cache(f, 0, 20);
	build(f, m, n, now);
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 1, collect, &dry, &gs, &e), 0);
	assert_int_equal(vg_cache_gc(f->c, 0, collect, &real, &gs, &e), 0);
	assert_int_equal(real.n, dry.n);
	for (i = 0; i < dry.n; i++) {
		assert_string_equal(real.v[i].digest, dry.v[i].digest);
		assert_int_equal(real.v[i].why, dry.v[i].why);
	}
	for (i = 0; i < n; i++) {
		path = vg_xasprintf("%s/sha256/%s.sif", f->cache,
		    m[i].digest);
		if (k < dry.n && strcmp(dry.v[k].digest, m[i].digest) == 0) {
			assert_int_equal(access(path, F_OK), -1);
			m[i].image = -1;	/* removed */
			k++;
		} else {
			assert_int_equal(access(path, F_OK),
			    m[i].image ? 0 : -1);
		}
		free(path);
	}
	assert_int_equal(k, dry.n);
	/* the references of what went went with it */
	for (i = 0, k = 0; i < n; i++)
		k += m[i].ref && m[i].image != -1;
	assert_int_equal(refs_naming(f, m, n, 0), k);
	assert_int_equal(refs_naming(f, m, n, 1), 0);
	/* what stays fits: nothing more to do */
	free(dry.v);
	memset(&dry, 0, sizeof(dry));
	assert_int_equal(vg_cache_gc(f->c, 1, collect, &dry, &gs, &e), 0);
	assert_int_equal(dry.n, 0);
	assert_int_equal(gs.entries, 20);
	free(dry.v);
	free(real.v);
	free(m);
}

/* The fixed format parses as strtod would; other spellings still do. */
static void
test_rec_parse(void **state)
{
	/* what follows the digest; NULL ends the list */
	static const char *const bad[] = {
		"",				/* no fields */
		" 1 2.000",			/* one time */
		" 1 2.000 3.000 4",		/* trailing field */
		" x 2.000 3.000",
		" 1 2.000 3.000\r",
		"  1 2.000 3.0x",
		" 1 2.000 .",
		NULL,
	};
	static const char *const good[] = {
		" 5 1700000000.123 1700000000.999",
		" 18446744073709551615 0.000 0.001",
		" +5 1e3 -0.5",
		" 00012 12.5 7",
		" 99999999999999999999 123456789012345.678 1.2345",
		NULL,
	};
	char d[65], up[65], line[256];
	unsigned char bin[32], want[32];
	uint64_t size;
	double pulled, used;
	char *end;
	size_t i;

	(void)state;
	vg_sha256_str("x", d);
	for (i = 0; i < 64; i++)
		up[i] = (char)(d[i] >= 'a' ? d[i] - 32 : d[i]);
	up[64] = '\0';
	assert_int_equal(cache_digest_bin(d, want), 0);
	assert_int_equal(cache_digest_bin(up, bin), -1);
	assert_int_equal(cache_digest_bin("0123", bin), -1);
	assert_int_equal(cache_rec_parse("0123 1 2.000 3.000", bin, &size,
	    &pulled, &used), -1);
	snprintf(line, sizeof(line), "%s%s", up, good[0]);
	assert_int_equal(cache_rec_parse(line, bin, &size, &pulled, &used),
	    -1);
	for (i = 0; bad[i] != NULL; i++) {
		snprintf(line, sizeof(line), "%s%s", d, bad[i]);
		if (cache_rec_parse(line, bin, &size, &pulled, &used) != -1)
			fail_msg("'%s' parsed", line);
	}
	for (i = 0; good[i] != NULL; i++) {
		snprintf(line, sizeof(line), "%s%s", d, good[i]);
		assert_int_equal(cache_rec_parse(line, bin, &size, &pulled,
		    &used), 0);
		assert_memory_equal(bin, want, 32);
		assert_true(size == strtoull(line + 65, &end, 10));
		assert_true(pulled == strtod(end + 1, &end));
		assert_true(used == strtod(end + 1, &end));
	}
	cache_digest_hex(want, line);
	assert_string_equal(line, d);
}

/* gc fails clearly when the images or a shard cannot be read. */
static void
test_gc_errors(void **state)
{
	struct fix *f = *state;
	struct vg_cache_gc_stats gs;
	struct vg_err e;
	char *path, *want;

	open_cache(f, 0, 0);
	/* a shard that is a directory */
	path = vg_path_join(f->cache, "entries/00.rec");
	assert_int_equal(mkdir(path, 0755), 0);
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 1, NULL, NULL, &gs, &e), VG_EIO);
	want = vg_xasprintf("cannot read '%s': Is a directory", path);
	assert_string_equal(e.msg, want);
	free(want);
	assert_int_equal(rmdir(path), 0);
	/* a shard beyond 64 MiB (sparse) */
	assert_int_equal(truncate(path, 0), -1);
	touch(f, "entries/00.rec");
	assert_int_equal(truncate(path, (64 << 20) + 1), 0);
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 1, NULL, NULL, &gs, &e),
	    VG_ELIMIT);
	want = vg_xasprintf("'%s' is larger than 67108864 bytes", path);
	assert_string_equal(e.msg, want);
	free(want);
	assert_int_equal(unlink(path), 0);
	free(path);
	/* no image directory */
	path = vg_path_join(f->cache, "sha256");
	assert_int_equal(rmdir(path), 0);
	vg_err_init(&e);
	assert_int_equal(vg_cache_gc(f->c, 1, NULL, NULL, &gs, &e), VG_EIO);
	want = vg_xasprintf("cannot read '%s': No such file or directory",
	    path);
	assert_string_equal(e.msg, want);
	free(want);
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gc_plan_matches_model,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_removes_plan, setup,
		    teardown),
		cmocka_unit_test(test_rec_parse),
		cmocka_unit_test_setup_teardown(test_gc_errors, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * cache.c - resolving image references to verified local SIF files:
 * records, pins, the pull lock and the pulls themselves (libcurl for
 * http(s), `apptainer pull` for registries).  Listing and verification
 * live in maint.c, gc in gc.c.
 *
 * Entry records are kept in 256 shard files (entries/<first two hex
 * digits>.rec, one line per image: digest, size, pulled, last use), each
 * rewritten atomically under its own lock: gc then reads 256 small files
 * instead of opening one per image, which is what keeps planning over
 * 100,000 images fast on filesystems where every open costs microseconds.
 * Reference records are one file each (refs/), read only by resolve and
 * list.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/adopt.h"
#include "common/beneath.h"
#include "common/curl.h"
#include "common/log.h"
#include "common/buf.h"
#include "common/path.h"
#include "common/home.h"
#include "common/version.h"
#include "common/which.h"
#include "scratch/scratch.h"
#include "sif-cache/cache-int.h"
#include "sif-cache/lock.h"
#include "sif-cache/sha256.h"
#include "runner/manifest/schema-table.h"

#define REC_MAX		(64u << 20)	/* a shard: 100,000+ lines */
#define REF_MAX		65536
#define STDERR_KEEP	4096		/* puller's stderr tail kept */
#define FRESH_SLACK	3600.0		/* min. gain of a re-pull */

enum ref_kind {
	REF_LOCAL,
	REF_REGISTRY,
	REF_HTTP,
};

static unsigned tmp_seq;

/* ---- small helpers ---- */

int
cache_is_digest_name(const char *name, const char *suffix)
{
	int i;

	for (i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)name[i]) ||
		    isupper((unsigned char)name[i]))
			return 0;
	return strcmp(name + 64, suffix) == 0;
}

char *
cache_image_path(const struct vg_cache *c, const char *digest)
{
	return vg_xasprintf("%s/%s.sif", c->d_sha, digest);
}

double
cache_margin(const struct vg_cache *c)
{
	if (c->margin > 0)
		return c->margin;
	if (c->purge.margin > 0)
		return (double)c->purge.margin;
	return VG_CACHE_MARGIN;
}

/* fsyncs a directory so a rename in it survives a crash. */
static void
fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

/*
 * Like vg_write_file_atomic, with a temporary name that includes the host:
 * the cache directory is shared between nodes, where pids collide.
 */
int
cache_write_atomic(const char *path, const char *data, size_t len,
    struct vg_err *e)
{
	char *tmp, *dir, *slash;
	int fd, rc = 0;

	tmp = vg_xasprintf("%s.tmp.%s.%ld.%u", path, vg_lock_hostname(),
	    (long)getpid(), tmp_seq++);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd < 0) {
		rc = vg_err_errno(e, "cannot create '%s'", tmp);
		free(tmp);
		return rc;
	}
	/* Readable by every user of the cache whatever the umask. */
	(void)fchmod(fd, 0644);
	if (vg_write_all(fd, data, len) != 0)
		rc = vg_err_errno(e, "cannot write '%s'", tmp);
	if (rc == 0 && fsync(fd) != 0)
		rc = vg_err_errno(e, "cannot sync '%s'", tmp);
	if (close(fd) != 0 && rc == 0)
		rc = vg_err_errno(e, "cannot close '%s'", tmp);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = vg_err_errno(e, "cannot rename '%s' to '%s'", tmp, path);
	if (rc != 0) {
		(void)unlink(tmp);
	} else {
		dir = vg_xstrdup(path);
		if ((slash = strrchr(dir, '/')) != NULL) {
			*slash = '\0';
			fsync_dir(dir);
		}
		free(dir);
	}
	free(tmp);
	return rc;
}

/* ---- open and close ---- */

/* Resolves cache.trusted_writers (user names or uids) into c. */
static int
trusted_uids(struct vg_cache *c, const struct vg_strv *names,
    struct vg_err *e)
{
	struct passwd *pw;
	char *end;
	size_t i;
	long v;

	c->trusted = vg_xcalloc(names->n + 1, sizeof(*c->trusted));
	for (i = 0; i < names->n; i++) {
		if ((pw = getpwnam(names->v[i])) != NULL) {
			c->trusted[c->ntrusted++] = pw->pw_uid;
			continue;
		}
		v = strtol(names->v[i], &end, 10);
		if (*names->v[i] == '\0' || *end != '\0' || v < 0)
			return vg_err_set(e, VG_EINVAL, "cache.trusted_writers: "
			    "'%s' is neither a user name nor a uid",
			    names->v[i]);
		c->trusted[c->ntrusted++] = (uid_t)v;
	}
	return 0;
}

int
cache_trusted(const struct vg_cache *c, uid_t uid)
{
	size_t i;

	if (uid == 0 || uid == geteuid())
		return 1;
	for (i = 0; i < c->ntrusted; i++)
		if (c->trusted[i] == uid)
			return 1;
	return 0;
}

/* vg_lock_trust's view of cache_trusted. */
static int
lock_trust(const void *arg, uid_t uid)
{
	return cache_trusted(arg, uid);
}

/* The user's own directory of records of images hashed (made on first
 * use, adopted: common/adopt.h); -1 when there is none. */
static int
verified_dir(struct vg_cache *c)
{
	struct vg_err e;
	char *home;
	int fd;

	if (c->d_verified == NULL) {
		home = vg_home_dir();
		c->d_verified = vg_path_join(home, "sif-verified");
		free(home);
	}
	vg_err_init(&e);
	fd = vg_adopt_dir(c->d_verified, 0700, VG_ADOPT_CREATE,
	    "SIF cache records", &e);
	return fd;
}

int
cache_content_check(struct vg_cache *c, int fd, const char *path,
    const char *digest, int use_record, struct vg_err *e)
{
	struct vg_buf owner = VG_BUF_INIT;
	struct stat st;
	char key[200], hex[65];
	int dfd = -1, rfd, rc;
	ssize_t n;

	if (fstat(fd, &st) != 0)
		return vg_err_errno(e, "cannot stat '%s'", path);
	snprintf(key, sizeof(key), "%lu %lu %lld %lld.%09ld %lld.%09ld\n",
	    (unsigned long)st.st_dev, (unsigned long)st.st_ino,
	    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
	    st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
	    st.st_ctim.tv_nsec);
	if (use_record && (dfd = verified_dir(c)) >= 0) {
		rfd = openat(dfd, digest, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (rfd >= 0) {
			char got[200];

			n = read(rfd, got, sizeof(got) - 1);
			close(rfd);
			if (n > 0 && (got[n] = '\0', strcmp(got, key) == 0)) {
				close(dfd);
				return 0;
			}
		}
	}
	rc = vg_sha256_fd(fd, path, hex, e);
	if (rc == 0 && strcmp(hex, digest) != 0) {
		vg_owner_desc(st.st_uid, &owner);
		rc = vg_err_set(e, VG_EDENIED, "'%s' is not the image its "
		    "address names: its SHA-256 is %s (file owned by %s, mode "
		    "%04o); not used", path, hex, vg_buf_str(&owner),
		    (unsigned)(st.st_mode & 07777));
	} else if (rc == 0 && dfd >= 0) {
		struct vg_err ignored;

		vg_err_init(&ignored);
		(void)vg_beneath_replace(dfd, digest, key, strlen(key), 0600,
		    "SIF cache record", &ignored);
	}
	if (dfd >= 0)
		close(dfd);
	vg_buf_release(&owner);
	return rc;
}

int
vg_cache_open(const struct vg_cache_conf *conf, const char *default_dir,
    struct vg_cache **out, struct vg_err *e)
{
	struct vg_cache *c;
	const char *dir = NULL;
	struct stat dst;
	char *subs[6];
	int rc, i;

	*out = NULL;
	if (conf != NULL && conf->dir != NULL && conf->dir[0] != '\0')
		dir = conf->dir;
	else if (getenv("VIGIL_SIF_CACHE") != NULL &&
	    getenv("VIGIL_SIF_CACHE")[0] != '\0')
		dir = getenv("VIGIL_SIF_CACHE");
	else
		dir = default_dir;
	if (dir == NULL || dir[0] == '\0')
		return vg_err_set(e, VG_EINVAL, "no SIF cache directory: set "
		    "cache.dir or $VIGIL_SIF_CACHE");
	c = vg_xcalloc(1, sizeof(*c));
	c->dir = vg_xstrdup(dir);
	c->lease = VG_CACHE_LOCK_LEASE;
	c->wait = VG_CACHE_LOCK_WAIT;
	if (conf != NULL) {
		if ((rc = vg_purge_from_conf(&conf->purge, &c->purge, e)) != 0)
			goto fail;
		c->purge_set = (conf->purge.preset != NULL &&
		    conf->purge.preset[0] != '\0') || conf->purge.age > 0;
		c->margin = (double)conf->purge.margin;
		c->quota_bytes = conf->quota_bytes;
		c->quota_entries = conf->quota_entries;
		if (conf->lock_lease > 0)
			c->lease = conf->lock_lease;
		if (conf->lock_wait > 0)
			c->wait = conf->lock_wait;
	} else {
		vg_purge_from_conf(NULL, &c->purge, NULL);
	}
	c->d_sha = vg_path_join(c->dir, "sha256");
	c->d_refs = vg_path_join(c->dir, "refs");
	c->d_entries = vg_path_join(c->dir, "entries");
	c->d_pins = vg_path_join(c->dir, "pins");
	c->d_locks = vg_path_join(c->dir, "locks");
	c->d_tmp = vg_path_join(c->dir, "tmp");
	subs[0] = c->d_sha, subs[1] = c->d_refs, subs[2] = c->d_entries;
	subs[3] = c->d_pins, subs[4] = c->d_locks, subs[5] = c->d_tmp;
	if (conf != NULL && (rc = trusted_uids(c, &conf->trusted_writers,
	    e)) != 0)
		goto fail;
	if ((rc = vg_mkdir_p(c->dir, 0755, e)) != 0) {
		vg_err_prefix(e, "SIF cache: ");
		goto fail;
	}
	vg_lock_trust(lock_trust, c);
	/* What vigil makes has the cache's mode whatever the umask: a
	 * group-shared cache (group-writable root) gets group-writable,
	 * setgid directories, any other 0755. */
	c->dmode = stat(c->dir, &dst) == 0 && (dst.st_mode & S_IWGRP) ?
	    02775 : 0755;
	for (i = 0; i < 6; i++) {
		if (mkdir(subs[i], c->dmode) == 0)
			(void)chmod(subs[i], c->dmode);
		else if (errno != EEXIST) {
			rc = vg_err_errno(e, "SIF cache: cannot make '%s'",
			    subs[i]);
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	vg_cache_close(c);
	return rc;
}

int
vg_cache_open_default(const struct vg_cache_conf *conf,
    const struct vg_scratch_conf *scratch, struct vg_cache **out,
    struct vg_err *e)
{
	const char *env = getenv("VIGIL_SIF_CACHE");
	char *home = NULL, *base = NULL, *reason = NULL, *def = NULL;
	int rc;

	*out = NULL;
	if ((conf == NULL || conf->dir == NULL || conf->dir[0] == '\0') &&
	    (env == NULL || env[0] == '\0')) {
		home = vg_home_dir();
		rc = vg_scratch_base(scratch, home, &base, &reason, e);
		free(home);
		free(reason);
		if (rc != 0)
			return vg_err_prefix(e, "SIF cache: no cache.dir or "
			    "$VIGIL_SIF_CACHE, and no scratch base for the "
			    "default: ");
		def = vg_path_join(base, VG_CACHE_DEFAULT_NAME);
		free(base);
	}
	rc = vg_cache_open(conf, def, out, e);
	free(def);
	return rc;
}

/* True when dir is root or lies beneath it (root without a final '/'). */
static int
under(const char *dir, const char *root)
{
	size_t n;

	if (root == NULL || root[0] != '/')
		return 0;
	n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	return strncmp(dir, root, n) == 0 && (dir[n] == '\0' ||
	    dir[n] == '/');
}

const char *
vg_cache_purge_warning(struct vg_cache *c)
{
	static const char *const vars[] = {
		"SCRATCH", "PSCRATCH", "VIGIL_SCRATCH",
	};
	const char *where = NULL;
	size_t i;

	if (c->purge_set)
		return NULL;
	if (under(c->dir, VG_SCRATCH_SITE_ROOT))
		where = VG_SCRATCH_SITE_ROOT;
	for (i = 0; where == NULL && i < sizeof(vars) / sizeof(vars[0]); i++)
		if (under(c->dir, getenv(vars[i])))
			where = vars[i];
	if (where == NULL)
		return NULL;
	if (c->warning == NULL)
		c->warning = vg_xasprintf("SIF cache '%s' is on a scratch "
		    "file system (%s%s) but no purge policy is set: images "
		    "may be purged under running tasks; set cache.purge (a "
		    "site preset such as nersc, or {age, clock}, or none)",
		    c->dir, where[0] == '/' ? "" : "$", where);
	return c->warning;
}

const char *
vg_cache_dir(const struct vg_cache *c)
{
	return c->dir;
}

void
vg_cache_set_puller(struct vg_cache *c, const char *binary)
{
	free(c->puller);
	c->puller = binary != NULL && binary[0] != '\0' ?
	    vg_xstrdup(binary) : NULL;
}

void
vg_cache_close(struct vg_cache *c)
{
	if (c == NULL)
		return;
	free(c->dir);
	free(c->d_sha);
	free(c->d_refs);
	free(c->d_entries);
	free(c->d_pins);
	free(c->d_locks);
	free(c->d_tmp);
	free(c->puller);
	free(c->warning);
	free(c->trusted);
	free(c->d_verified);
	vg_lock_trust(NULL, NULL);
	free(c);
}

/* ---- entry records (shards) ---- */

/* Value of a lowercase hex digit, else -1. */
static const signed char hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};	/* stored plus one, so that 0 means "not a digit" */

int
cache_digest_bin(const char *hex, unsigned char bin[32])
{
	const unsigned char *h = (const unsigned char *)hex;
	int i, hi, lo;

	for (i = 0; i < 32; i++) {
		/* stop at the first non-digit: it may be the NUL */
		if ((hi = hexval[h[2 * i]]) == 0 ||
		    (lo = hexval[h[2 * i + 1]]) == 0)
			return -1;
		bin[i] = (unsigned char)((hi - 1) << 4 | (lo - 1));
	}
	return 0;
}

void
cache_digest_hex(const unsigned char bin[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[bin[i] >> 4];
		hex[2 * i + 1] = digits[bin[i] & 15];
	}
	hex[64] = '\0';
}

/* Reads up to max decimal digits at p into *v; returns how many. */
static int
fast_digits(const char *p, int max, uint64_t *v)
{
	int n;

	*v = 0;
	for (n = 0; n < max && p[n] >= '0' && p[n] <= '9'; n++)
		*v = *v * 10 + (uint64_t)(p[n] - '0');
	return n;
}

/*
 * The fixed format the records are written in: up to 19 digits then
 * stop.  0 with *out and *end set, else -1 (the caller falls back to
 * strtoull, which also takes signs, spaces and overflow).
 */
static int
fast_u64(const char *p, char stop, uint64_t *out, const char **end)
{
	uint64_t v;
	int n;

	if ((n = fast_digits(p, 19, &v)) == 0 || p[n] != stop)
		return -1;
	*out = v;
	*end = p + n;
	return 0;
}

/*
 * "%.3f" as written by cache_rec_update, up to 12 integer digits, then
 * stop.  The thousandths as an integer are exact in a double, and one
 * IEEE division rounds correctly, so the result equals strtod's.
 */
static int
fast_time(const char *p, char stop, double *out, const char **end)
{
	uint64_t v;
	int n;

	if ((n = fast_digits(p, 12, &v)) == 0 || p[n] != '.' || p[n + 1] < '0' || p[n + 1] > '9' ||
	    p[n + 2] < '0' || p[n + 2] > '9' || p[n + 3] < '0' ||
	    p[n + 3] > '9' || p[n + 4] != stop)
		return -1;
	v = v * 1000 + (uint64_t)(p[n + 1] - '0') * 100 +
	    (uint64_t)(p[n + 2] - '0') * 10 + (uint64_t)(p[n + 3] - '0');
	*out = (double)v / 1000.0;
	*end = p + n + 4;
	return 0;
}

int
cache_rec_parse(const char *line, unsigned char digest[32], uint64_t *size,
    double *pulled, double *last_use)
{
	const char *p;
	char *end;

	if (cache_digest_bin(line, digest) != 0 || line[64] != ' ')
		return -1;
	p = line + 65;
	if (fast_u64(p, ' ', size, &p) != 0) {
		*size = strtoull(p, &end, 10);
		if (end == p || *end != ' ')
			return -1;
		p = end;
	}
	p++;
	if (fast_time(p, ' ', pulled, &p) != 0) {
		*pulled = strtod(p, &end);
		if (end == p || *end != ' ')
			return -1;
		p = end;
	}
	p++;
	if (fast_time(p, '\0', last_use, &p) != 0) {
		*last_use = strtod(p, &end);
		if (end == p || *end != '\0')
			return -1;
	}
	return 0;
}

/* Parses one shard's text into r (appending). */
static void
recs_parse(char *text, struct cache_recs *r)
{
	unsigned char bin[32];
	char *line, *nl;
	uint64_t size;
	double pulled, used;

	/* "<digest> <size> <pulled> <last use>"; other lines are skipped */
	for (line = text; *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (strlen(line) >= 70 && cache_rec_parse(line, bin, &size,
		    &pulled, &used) == 0) {
			r->v = vg_xgrow(r->v, &r->cap, r->n + 1,
			    sizeof(*r->v));
			memcpy(r->v[r->n].digest, line, 64);
			r->v[r->n].digest[64] = '\0';
			r->v[r->n].size = size;
			r->v[r->n].pulled = pulled;
			r->v[r->n].last_use = used;
			r->n++;
		}
		if (nl == NULL)
			break;
	}
}

/* Loads one shard file; a missing shard is empty. */
int
cache_recs_load(const char *path, struct cache_recs *r, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	int rc;

	rc = vg_read_file(path, REC_MAX, &b, e);
	if (rc == VG_ENOENT)
		rc = 0;
	else if (rc == 0 && b.data != NULL)
		recs_parse(b.data, r);
	vg_buf_release(&b);
	return rc;
}

int
cache_recs_load_all(struct vg_cache *c, struct cache_recs *out,
    struct vg_err *e)
{
	char *path;
	int i, rc;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < 256; i++) {
		path = vg_xasprintf("%s/%02x.rec", c->d_entries, i);
		rc = cache_recs_load(path, out, e);
		free(path);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void
cache_recs_release(struct cache_recs *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/*
 * Takes the lock of record shard (0..255) and loads its records into r;
 * *path is the shard's file (the caller frees it, and releases *lk and
 * r, also on failure).
 */
static int
shard_load(struct vg_cache *c, int shard, char **path, struct vg_lock **lk,
    struct cache_recs *r, struct vg_err *e)
{
	char *lpath;
	int rc;

	*path = vg_xasprintf("%s/%02x.rec", c->d_entries, shard);
	lpath = vg_xasprintf("%s/shard-%02x.lock", c->d_locks, shard);
	/* records are small: a short lease and wait suffice */
	rc = vg_lock_acquire(lpath, 10, 30, lk, e);
	free(lpath);
	if (rc == 0)
		rc = cache_recs_load(*path, r, e);
	return rc;
}

/* Appends one record line in the format cache_rec_parse reads fastest
 * ("%.3f" times). */
static void
rec_line(struct vg_buf *out, const char *digest, uint64_t size,
    double pulled, double last_use)
{
	vg_buf_printf(out, "%s %llu %.3f %.3f\n", digest,
	    (unsigned long long)size, pulled, last_use);
}

int
cache_rec_update(struct vg_cache *c, const char *digest, int64_t size,
    double pulled, double last_use, int remove, struct vg_err *e)
{
	struct cache_recs r = { NULL, 0, 0 };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_lock *lk = NULL;
	unsigned char bin[32];
	char *path = NULL;
	size_t i;
	int rc, found = 0;

	if (strlen(digest) != 64 || !cache_is_digest_name(digest, "") ||
	    cache_digest_bin(digest, bin) != 0)
		return vg_err_set(e, VG_EINVAL, "'%s' is not a sha256 digest",
		    digest);
	if ((rc = shard_load(c, bin[0], &path, &lk, &r, e)) != 0)
		goto out;
	for (i = 0; i < r.n; i++) {
		if (strcmp(r.v[i].digest, digest) != 0) {
			rec_line(&out, r.v[i].digest, r.v[i].size,
			    r.v[i].pulled, r.v[i].last_use);
			continue;
		}
		if (found++ || remove)
			continue;
		if (size >= 0)
			r.v[i].size = (uint64_t)size;
		if (pulled >= 0)
			r.v[i].pulled = pulled;
		if (last_use > 0)
			r.v[i].last_use = last_use;
		rec_line(&out, digest, r.v[i].size, r.v[i].pulled,
		    r.v[i].last_use);
	}
	if (!found && !remove)
		rec_line(&out, digest, size >= 0 ? (uint64_t)size : 0,
		    pulled >= 0 ? pulled : vg_now(),
		    last_use > 0 ? last_use : 0.0);
	if (remove && !found)
		goto out;
	rc = cache_write_atomic(path, vg_buf_str(&out), out.len, e);
out:
	vg_lock_release(lk);
	vg_buf_release(&out);
	cache_recs_release(&r);
	free(path);
	return rc;
}

/* Whether the sorted digests d hold x. */
static int
digest_in(const unsigned char (*d)[32], size_t n, const unsigned char *x)
{
	size_t lo = 0, hi = n, mid;
	int r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((r = memcmp(d[mid], x, 32)) == 0)
			return 1;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int
cache_recs_remove(struct vg_cache *c, int shard, const unsigned char (*d)[32],
    size_t n, struct vg_err *e)
{
	struct cache_recs r = { NULL, 0, 0 };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_lock *lk = NULL;
	unsigned char bin[32];
	char *path = NULL;
	size_t i, removed = 0;
	int rc;

	if ((rc = shard_load(c, shard, &path, &lk, &r, e)) != 0)
		goto out;
	for (i = 0; i < r.n; i++) {
		(void)cache_digest_bin(r.v[i].digest, bin);
		if (digest_in(d, n, bin)) {
			removed++;
			continue;
		}
		rec_line(&out, r.v[i].digest, r.v[i].size, r.v[i].pulled,
		    r.v[i].last_use);
	}
	if (removed > 0)
		rc = cache_write_atomic(path, vg_buf_str(&out), out.len, e);
out:
	vg_lock_release(lk);
	vg_buf_release(&out);
	cache_recs_release(&r);
	free(path);
	return rc;
}

/* ---- references ---- */

/* Classifies ref; for http(s) splits off a pinned digest. */
static int
ref_parse(const char *ref, enum ref_kind *kind, char **url,
    char pinned[65], struct vg_err *e)
{
	static const char *registries[] = { "docker://", "oras://",
	    "library://" };
	const char *at, *p;
	size_t i;

	*url = NULL;
	pinned[0] = '\0';
	if (ref == NULL || ref[0] == '\0')
		return vg_err_set(e, VG_EINVAL, "empty image reference");
	for (p = ref; *p != '\0'; p++)
		if (iscntrl((unsigned char)*p) || *p == ' ')
			return vg_err_set(e, VG_EINVAL, "image reference '%s' "
			    "contains a space or control character", ref);
	for (i = 0; i < sizeof(registries) / sizeof(registries[0]); i++) {
		if (strncmp(ref, registries[i], strlen(registries[i])) == 0) {
			if (ref[strlen(registries[i])] == '\0')
				break;
			*kind = REF_REGISTRY;
			return 0;
		}
	}
	if (strncmp(ref, "https://", 8) == 0 ||
	    strncmp(ref, "http://", 7) == 0) {
		*kind = REF_HTTP;
		at = strstr(ref, "@sha256:");
		if (at == NULL) {
			*url = vg_xstrdup(ref);
			return 0;
		}
		if (strlen(at + 8) != 64 || !cache_is_digest_name(at + 8, ""))
			return vg_err_set(e, VG_EINVAL, "image reference '%s': "
			    "expected 64 lowercase hex digits after "
			    "'@sha256:'", ref);
		memcpy(pinned, at + 8, 65);
		*url = vg_xstrndup(ref, (size_t)(at - ref));
		return 0;
	}
	if (strstr(ref, "://") != NULL)
		return vg_err_set(e, VG_EINVAL, "image reference '%s': "
		    "unsupported scheme (valid: docker://, oras://, "
		    "library://, https://, http://, or a local .sif path)",
		    ref);
	*kind = REF_LOCAL;
	return 0;
}

/* refs/<sha256(host arch + ref)>.ref: images differ by architecture. */
static char *
ref_path(const struct vg_cache *c, const char *ref)
{
	char key[65], *s;

	s = vg_xasprintf("%s %s", vg_sif_host_arch(), ref);
	vg_sha256_str(s, key);
	free(s);
	return vg_xasprintf("%s/%s.ref", c->d_refs, key);
}

char *
vg_cache_ref_public(const char *ref)
{
	const char *p = strstr(ref, "://"), *end, *at = NULL, *q;
	struct vg_buf b = VG_BUF_INIT;

	if (p == NULL)
		return vg_xstrdup(ref);
	end = p + 3 + strcspn(p + 3, "/?#");
	for (q = p + 3; q < end; q++)
		if (*q == '@')
			at = q;
	vg_buf_add(&b, ref, (size_t)(p + 3 - ref));
	vg_buf_adds(&b, at != NULL ? at + 1 : p + 3);
	/* A query carries presigned credentials (X-Amz-Signature, sig=,
	 * token=): never kept. */
	if ((q = strchr(vg_buf_str(&b), '?')) != NULL) {
		b.len = (size_t)(q - b.data);
		b.data[b.len] = '\0';
		vg_buf_adds(&b, "?…");
	}
	return vg_buf_detach(&b);
}

/* Reads the digest a reference record names; 0 and "" when none. */
static int
ref_read_digest(const struct vg_cache *c, const char *ref, char digest[65])
{
	struct vg_buf b = VG_BUF_INIT;
	char *path = ref_path(c, ref), *p;
	struct stat st;

	digest[0] = '\0';
	/* A regular file only (a FIFO cannot hang vigil), written by a
	 * writer the site trusts: anyone else's record could point a tag
	 * at her own image, which would pass its hash. */
	if (vg_read_regular(path, REF_MAX, &b, &st, "refs record", NULL) ==
	    0 && !cache_trusted(c, st.st_uid)) {
		struct vg_buf who = VG_BUF_INIT;

		vg_owner_desc(st.st_uid, &who);
		vg_warn("SIF cache: '%s' was written by %s, who is not in "
		    "cache.trusted_writers: not believed, '%s' is pulled "
		    "again", path, vg_buf_str(&who), ref);
		vg_buf_release(&who);
		vg_buf_reset(&b);
	}
	if (b.data != NULL && (p = strstr(b.data, "\ndigest ")) != NULL &&
	    strlen(p + 8) >= 64) {
		memcpy(digest, p + 8, 64);
		digest[64] = '\0';
		if (!cache_is_digest_name(digest, ""))
			digest[0] = '\0';
	}
	vg_buf_release(&b);
	free(path);
	return 0;
}

void
vg_cache_ref_digest(const struct vg_cache *c, const char *ref,
    char digest[65])
{
	(void)ref_read_digest(c, ref, digest);
}

/* Writes the record "ref -> digest, when, from where, with what". */
static int
ref_write(const struct vg_cache *c, const char *ref, const char *digest,
    const char *source, const char *tool, struct vg_err *e)
{
	char *path = ref_path(c, ref), *text;
	int rc;

	char *r = vg_cache_ref_public(ref), *src = vg_cache_ref_public(source);

	text = vg_xasprintf("ref %s\ndigest %s\npulled %.3f\nsource %s\n"
	    "tool %s\narch %s\nhost %s\n", r, digest, vg_now(), src,
	    tool, vg_sif_host_arch(), vg_lock_hostname());
	free(r);
	free(src);
	rc = cache_write_atomic(path, text, strlen(text), e);
	free(text);
	free(path);
	return rc;
}

/* ---- pins ---- */

int
cache_pin_parse(const char *name, char digest[65], char *host,
    size_t hostlen, long *pid, double *expiry)
{
	const char *p, *dots[3];
	char *end;
	size_t n;
	int k = 0;

	if (strlen(name) < 66 || name[64] != '.')
		return -1;
	memcpy(digest, name, 64);
	digest[64] = '\0';
	if (!cache_is_digest_name(digest, ""))
		return -1;
	/* <host>.<pid>.<expiry>.<seq>: the host may contain dots */
	for (p = name + strlen(name) - 1; p > name + 64 && k < 3; p--)
		if (*p == '.')
			dots[k++] = p;
	if (k < 3)
		return -1;
	n = (size_t)(dots[2] - (name + 65));
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, name + 65, n);
	host[n] = '\0';
	*pid = strtol(dots[2] + 1, &end, 10);
	if (end != dots[1])
		return -1;
	/* whole seconds: strtod would also eat the ".<seq>" */
	*expiry = (double)strtoll(dots[1] + 1, &end, 10);
	if (end != dots[0])
		return -1;
	return 0;
}

int
cache_pin_live(const char *host, long pid, double expiry, double now)
{
	if (strcmp(host, vg_lock_hostname()) == 0)
		return !vg_lock_owner_dead(host, pid);
	return expiry > now;
}

/* Creates a pin lease for digest lasting until needed_until. */
static struct vg_cache_pin *
pin_create(struct vg_cache *c, const char *digest, const char *ref,
    double needed_until, struct vg_err *e)
{
	struct vg_cache_pin *pin;
	double now = vg_now(), expiry;
	char *path, *text, *pub;
	int fd;

	/* other nodes cannot see our pid: the lease must outlast the task */
	expiry = needed_until > now ? needed_until + 3600 : now + 86400;
	path = vg_xasprintf("%s/%s.%s.%ld.%.0f.%u", c->d_pins, digest,
	    vg_lock_hostname(), (long)getpid(), floor(expiry), tmp_seq++);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd >= 0)
		(void)fchmod(fd, 0644);
	if (fd < 0) {
		vg_err_errno(e, "cannot create pin '%s'", path);
		free(path);
		return NULL;
	}
	pub = vg_cache_ref_public(ref);
	text = vg_xasprintf("host %s\npid %ld\nexpiry %.0f\nref %s\n",
	    vg_lock_hostname(), (long)getpid(), floor(expiry), pub);
	free(pub);
	if (write(fd, text, strlen(text)) < 0) {
		/* the name carries everything; the text is for humans */
	}
	close(fd);
	free(text);
	pin = vg_xcalloc(1, sizeof(*pin));
	pin->path = path;
	return pin;
}

void
vg_cache_unpin(struct vg_cache_pin *pin)
{
	if (pin == NULL)
		return;
	(void)unlink(pin->path);
	vg_cache_pin_free(pin);
}

void
vg_cache_pin_free(struct vg_cache_pin *pin)
{
	if (pin == NULL)
		return;
	free(pin->path);
	free(pin);
}

/* ---- checking a cached image ---- */

enum img_state {
	IMG_OK,
	IMG_MISSING,
	IMG_CORRUPT,
	IMG_FOREIGN,	/* another architecture: an error, not damage */
	IMG_EXPIRING,
};

/* Checks the image of digest: present, sound, not expiring. */
static enum img_state
img_check(struct vg_cache *c, const char *digest, double needed_until,
    int check_expiry, uint64_t *size, struct vg_err *e)
{
	char *path = cache_image_path(c, digest);
	struct stat st;
	double now, at;
	int fd, rc;
	enum img_state s = IMG_OK;

	/* A regular file only: O_NONBLOCK so a FIFO planted at the name
	 * cannot hang vigil. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NOFOLLOW |
	    O_NONBLOCK);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK);
	if (fd < 0) {
		s = errno == ENOENT ? IMG_MISSING : IMG_CORRUPT;
		if (s == IMG_CORRUPT)
			vg_err_errno(e, "cannot open '%s'", path);
		free(path);
		return s;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		vg_err_set(e, VG_EDENIED, "'%s' is not a regular file", path);
		close(fd);
		free(path);
		return IMG_CORRUPT;
	}
	rc = vg_sif_verify_fd(fd, path, NULL, e);
	if (rc == VG_EUNSUPPORTED)
		s = IMG_FOREIGN;
	else if (rc != 0)
		s = IMG_CORRUPT;
	/* Its content is its address: a group member may have written
	 * the name first or the file over (hashed once per file, then the
	 * user's own record). */
	else if (cache_content_check(c, fd, path, digest, 1, e) != 0)
		s = IMG_CORRUPT;
	else if (fstat(fd, &st) != 0)
		s = IMG_CORRUPT;
	if (s == IMG_OK) {
		*size = (uint64_t)st.st_size;
		now = vg_now();
		at = vg_purge_eligible_at(&c->purge, &st);
		/* a pull now would gain less than FRESH_SLACK: keep it */
		if (check_expiry && vg_purge_expiring(&c->purge, &st, now,
		    needed_until, cache_margin(c)) &&
		    at < now + (double)c->purge.age - FRESH_SLACK)
			s = IMG_EXPIRING;
	}
	close(fd);
	free(path);
	return s;
}

/* ---- pulls ---- */

struct http_ctx {
	int			 fd;
	struct vg_sha256	 sha;
	struct vg_lock		*lock;
	int			 werr;
};

/* libcurl write callback: to the temp file and the hash. */
static size_t
http_write(char *p, size_t sz, size_t n, void *arg)
{
	struct http_ctx *h = arg;
	size_t len = sz * n;

	vg_sha256_update(&h->sha, p, len);
	if (vg_write_all(h->fd, p, len) != 0) {
		h->werr = errno;
		return 0;
	}
	return len;
}

/* libcurl progress callback: keeps the pull lock's lease alive. */
static int
http_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct http_ctx *h = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	vg_lock_refresh(h->lock);
	return 0;
}

/* A unique temporary name in tmp/ (not created). */
static char *
tmp_name(const struct vg_cache *c, const char *ext)
{
	return vg_xasprintf("%s/%s.%ld.%u.%s", c->d_tmp, vg_lock_hostname(),
	    (long)getpid(), tmp_seq++, ext);
}

/*
 * Verifies the complete temporary file, syncs it and renames it to its
 * content address.  fd is positioned anywhere; closes nothing.
 */
static int
install(struct vg_cache *c, int fd, const char *tmp, const char *from,
    const char *digest, struct vg_err *e)
{
	char *final;
	int rc;

	if ((rc = vg_sif_verify_fd(fd, from, NULL, e)) != 0) {
		vg_err_prefix(e, "pulled image is not usable: ");
		return rc;
	}
	if (fsync(fd) != 0)
		return vg_err_errno(e, "cannot sync '%s'", tmp);
	if (fchmod(fd, 0644) != 0)
		return vg_err_errno(e, "cannot chmod '%s'", tmp);
	final = cache_image_path(c, digest);
	if (rename(tmp, final) != 0) {
		rc = vg_err_errno(e, "cannot rename '%s' to '%s'", tmp, final);
		free(final);
		return rc;
	}
	free(final);
	fsync_dir(c->d_sha);
	return 0;
}

/* Fetches url with libcurl into the cache; *digest gets its sha256. */
static int
pull_http(struct vg_cache *c, const char *url, const char *pinned,
    struct vg_lock *lock, char digest[65], uint64_t *size,
    struct vg_err *e)
{
	struct http_ctx h = { .fd = -1, .lock = lock };
	char errbuf[CURL_ERROR_SIZE] = "", *tmp;
	long status = 0;
	struct stat st;
	CURLcode cc;
	CURL *cu;
	int rc = 0;

	tmp = tmp_name(c, "part");
	h.fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (h.fd < 0) {
		rc = vg_err_errno(e, "cannot create '%s'", tmp);
		free(tmp);
		return rc;
	}
	vg_sha256_init(&h.sha);
	cu = curl_easy_init();
	if (cu == NULL) {
		rc = vg_err_set(e, VG_ENOMEM, "%s", vg_curl_error());
		goto out;
	}
	curl_easy_setopt(cu, CURLOPT_URL, url);
	curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(cu, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(cu, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(cu, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(cu, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT, 60L);
	/* a stalled transfer fails instead of holding the lock forever */
	curl_easy_setopt(cu, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(cu, CURLOPT_LOW_SPEED_TIME, 300L);
	curl_easy_setopt(cu, CURLOPT_USERAGENT, "vigil/" VG_VERSION);
	curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, http_write);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &h);
	curl_easy_setopt(cu, CURLOPT_XFERINFOFUNCTION, http_progress);
	curl_easy_setopt(cu, CURLOPT_XFERINFODATA, &h);
	curl_easy_setopt(cu, CURLOPT_NOPROGRESS, 0L);
	cc = curl_easy_perform(cu);
	curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(cu);
	if (h.werr != 0) {
		errno = h.werr;
		rc = vg_err_errno(e, "cannot write '%s'", tmp);
		goto out;
	}
	if (cc != CURLE_OK) {
		rc = vg_err_set(e, VG_EBACKEND, "cannot fetch '%s': %s", url,
		    errbuf[0] != '\0' ? errbuf : curl_easy_strerror(cc));
		goto out;
	}
	vg_sha256_hex(&h.sha, digest);
	if (pinned != NULL && pinned[0] != '\0' &&
	    strcmp(pinned, digest) != 0) {
		rc = vg_err_set(e, VG_EDENIED, "'%s' has sha256 %s, not the "
		    "pinned %s", url, digest, pinned);
		goto out;
	}
	if (fstat(h.fd, &st) != 0) {
		rc = vg_err_errno(e, "cannot stat '%s'", tmp);
		goto out;
	}
	*size = (uint64_t)st.st_size;
	rc = install(c, h.fd, tmp, url, digest, e);
out:
	vg_sha256_release(&h.sha);
	if (h.fd >= 0)
		close(h.fd);
	if (rc != 0)
		(void)unlink(tmp);
	free(tmp);
	return rc;
}

/* Keeps the last STDERR_KEEP bytes of a puller's stderr. */
static void
keep_tail(struct vg_buf *b, const char *p, size_t n)
{
	vg_buf_add(b, p, n);
	if (b->len > 2 * STDERR_KEEP) {
		memmove(b->data, b->data + b->len - STDERR_KEEP, STDERR_KEEP);
		b->len = STDERR_KEEP;
		b->data[b->len] = '\0';
	}
}

/* The last non-empty line of text, trimmed (points into text). */
static const char *
last_line(char *text)
{
	char *end, *start;

	if (text == NULL)
		return "";
	end = text + strlen(text);
	while (end > text && isspace((unsigned char)end[-1]))
		*--end = '\0';
	start = strrchr(text, '\n');
	return start != NULL ? start + 1 : text;
}

/* Runs `apptainer pull TMP REF`, refreshing the lock while it runs. */
static int
pull_registry(struct vg_cache *c, const char *ref, struct vg_lock *lock,
    char digest[65], uint64_t *size, struct vg_err *e)
{
	struct vg_buf errs = VG_BUF_INIT;
	char *bin = NULL, *tmp, buf[1024];
	struct pollfd pfd;
	struct stat st;
	pid_t pid;
	int pfds[2] = { -1, -1 }, devnull, status = 0, fd = -1, rc = 0;
	ssize_t n;

	if (c->puller != NULL)
		bin = vg_which(c->puller);
	else if ((bin = vg_which("apptainer")) == NULL)
		bin = vg_which("singularity");
	if (bin == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "cannot pull '%s': %s",
		    ref, c->puller != NULL ? "the configured puller is not "
		    "an executable" : "neither apptainer nor singularity is "
		    "in PATH (set singularity.binary)");
	tmp = tmp_name(c, "sif");
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || pipe2(pfds, O_CLOEXEC) != 0) {
		rc = vg_err_errno(e, "cannot set up '%s pull'", bin);
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		rc = vg_err_errno(e, "cannot fork");
		goto out;
	}
	if (pid == 0) {
		/* async-signal-safe calls only */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
		    dup2(pfds[1], 2) < 0)
			_exit(126);
		execl(bin, bin, "pull", tmp, ref, (char *)NULL);
		_exit(127);
	}
	close(pfds[1]);
	pfds[1] = -1;
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	for (;;) {
		vg_lock_refresh(lock);
		if (poll(&pfd, 1, 1000) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd.revents == 0)
			continue;
		n = read(pfds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		keep_tail(&errs, buf, (size_t)n);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		rc = vg_err_set(e, VG_EBACKEND, "'%s pull' of '%s' failed "
		    "(%s %d): %s", bin, ref, WIFEXITED(status) ? "exit" :
		    "signal", WIFEXITED(status) ? WEXITSTATUS(status) :
		    WTERMSIG(status), last_line(errs.data));
		goto out;
	}
	fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = vg_err_errno(e, "'%s pull' of '%s' left no image", bin,
		    ref);
		goto out;
	}
	if ((rc = vg_sha256_fd(fd, tmp, digest, e)) != 0)
		goto out;
	if (fstat(fd, &st) != 0) {
		rc = vg_err_errno(e, "cannot stat '%s'", tmp);
		goto out;
	}
	*size = (uint64_t)st.st_size;
	rc = install(c, fd, tmp, ref, digest, e);
out:
	if (fd >= 0)
		close(fd);
	if (pfds[0] >= 0)
		close(pfds[0]);
	if (pfds[1] >= 0)
		close(pfds[1]);
	if (devnull >= 0)
		close(devnull);
	if (rc != 0)
		(void)unlink(tmp);
	vg_buf_release(&errs);
	free(tmp);
	free(bin);
	return rc;
}

/* Pulls ref under the lock and records it; *digest names the result. */
static int
pull_and_record(struct vg_cache *c, const char *ref, enum ref_kind kind,
    const char *url, const char *pinned, struct vg_lock *lock,
    char digest[65], struct vg_err *e)
{
	uint64_t size = 0;
	double now;
	int rc;

	if (kind == REF_HTTP)
		rc = pull_http(c, url, pinned, lock, digest, &size, e);
	else
		rc = pull_registry(c, ref, lock, digest, &size, e);
	if (rc != 0)
		return rc;
	now = vg_now();
	if ((rc = cache_rec_update(c, digest, (int64_t)size, now, now, 0,
	    e)) != 0)
		return rc;
	return ref_write(c, ref, digest, kind == REF_HTTP ? url : ref,
	    kind == REF_HTTP ? "libcurl" : (c->puller != NULL ? c->puller :
	    "apptainer pull"), e);
}

/* Removes a damaged image (under the pull lock) and its record. */
static void
drop_image(struct vg_cache *c, const char *digest)
{
	char *path = cache_image_path(c, digest);

	(void)unlink(path);
	free(path);
	(void)cache_rec_update(c, digest, -1, -1, 0, 1, NULL);
}

/* The shared body of resolve and pull. */
static int
resolve(struct vg_cache *c, const char *ref, double needed_until, int pin,
    int force, char **path_out, struct vg_cache_pin **pin_out,
    char digest[65], struct vg_err *e)
{
	struct vg_cache_pin *p = NULL;
	struct vg_lock *lock = NULL;
	struct vg_err ce;
	enum ref_kind kind;
	enum img_state s;
	char pinned[65], *url = NULL, *lpath = NULL, key[65], *ks;
	uint64_t size = 0;
	int rc, attempt;

	if ((rc = ref_parse(ref, &kind, &url, pinned, e)) != 0)
		return rc;
	if (kind == REF_LOCAL) {
		free(url);
		if (!pin)
			return vg_err_set(e, VG_EINVAL, "'%s' is a local path: "
			    "only references (docker://, https://, ...) are "
			    "pulled", ref);
		if ((rc = vg_sif_verify_file(ref, e)) != 0)
			return rc;
		*path_out = vg_xstrdup(ref);
		return 0;
	}
	ks = vg_xasprintf("%s %s", vg_sif_host_arch(), ref);
	vg_sha256_str(ks, key);
	free(ks);
	lpath = vg_xasprintf("%s/%s.lock", c->d_locks, key);
	/*
	 * Attempt 0 looks without the lock; attempt 1 looks again under it,
	 * since another process may have pulled while we waited.  force
	 * skips both looks.
	 */
	for (attempt = 0; attempt < 2; attempt++) {
		if (pinned[0] != '\0')
			memcpy(digest, pinned, 65);
		else
			ref_read_digest(c, ref, digest);
		if (digest[0] != '\0' && !force) {
			/* pin first, so a concurrent gc sees it */
			if (pin && (p = pin_create(c, digest, ref, needed_until,
			    e)) == NULL) {
				rc = VG_EIO;
				goto out;
			}
			vg_err_init(&ce);
			s = img_check(c, digest, needed_until, 1, &size, &ce);
			if (s == IMG_OK)
				goto found;
			vg_cache_unpin(p);
			p = NULL;
			if (s == IMG_FOREIGN) {
				rc = vg_err_set(e, VG_EUNSUPPORTED, "%s",
				    ce.msg);
				goto out;
			}
			/* under the lock nobody is installing it: drop it */
			if (s == IMG_CORRUPT && lock != NULL)
				drop_image(c, digest);
		}
		if (attempt == 0 && (rc = vg_lock_acquire(lpath, c->lease,
		    c->wait, &lock, e)) != 0) {
			vg_err_prefix(e, "cannot pull '%s': ", ref);
			goto out;
		}
	}
	if ((rc = pull_and_record(c, ref, kind, url, pinned, lock, digest,
	    e)) != 0)
		goto out;
	if (pin && (p = pin_create(c, digest, ref, needed_until, e)) == NULL) {
		rc = VG_EIO;
		goto out;
	}
	/* freshly pulled: sound by construction unless removed meanwhile */
	if (img_check(c, digest, needed_until, 0, &size, e) != IMG_OK) {
		rc = e != NULL && e->rc != 0 ? e->rc : VG_EIO;
		if (e != NULL && e->rc == 0)
			vg_err_set(e, VG_EIO, "image of '%s' vanished after "
			    "the pull", ref);
		goto out;
	}
found:
	(void)cache_rec_update(c, digest, (int64_t)size, -1, vg_now(), 0,
	    NULL);
	if (path_out != NULL)
		*path_out = cache_image_path(c, digest);
	if (pin_out != NULL) {
		*pin_out = p;
		p = NULL;
	}
	rc = 0;
out:
	vg_cache_unpin(p);
	vg_lock_release(lock);
	free(lpath);
	free(url);
	return rc;
}

int
vg_cache_resolve(struct vg_cache *c, const char *ref, double needed_until,
    char **path_out, struct vg_cache_pin **pin_out, struct vg_err *e)
{
	char digest[65];

	*path_out = NULL;
	*pin_out = NULL;
	return resolve(c, ref, needed_until, 1, 0, path_out, pin_out, digest,
	    e);
}

int
vg_cache_pull(struct vg_cache *c, const char *ref, int force,
    char **digest_out, struct vg_err *e)
{
	char digest[65] = "";
	int rc;

	*digest_out = NULL;
	rc = resolve(c, ref, 0, 0, force, NULL, NULL, digest, e);
	if (rc == 0)
		*digest_out = vg_xstrdup(digest);
	return rc;
}

/* ---- the cache: section ---- */

static const struct vg_section cache_section = {
	.name = "cache",
	.fields = (const struct vg_field[]){
		STR(vg_cache_conf, "dir", dir, "cache directory"),
		BYTES(vg_cache_conf, "quota_bytes", quota_bytes, 0, BIG,
		    "size quota"),
		U64(vg_cache_conf, "quota_entries", quota_entries, 0, BIG,
		    "entry quota"),
		SECTION(vg_cache_conf, "purge", purge, &vg_purge_schema,
		    "site purge policy"),
		DUR(vg_cache_conf, "lock_lease", lock_lease, NULL, 0, 86400,
		    "lock lease"),
		DUR(vg_cache_conf, "lock_wait", lock_wait, NULL, 0, 86400,
		    "how long to wait for a lock"),
		{ .key = "trusted_writers", .type = VG_F_STRV,
		  .off = OFF(vg_cache_conf, trusted_writers),
		  .flags = VG_FF_CONFIGONLY,
		  .help = "users whose refs/ records are believed, besides "
		  "root and you (config only)" },
		{ .key = NULL },
	},
};

const struct vg_msection vg_cache_msection = {
	.key = "cache",
	.schema = &cache_section,
	.size = sizeof(struct vg_cache_conf),
	.help = "SIF cache",
};

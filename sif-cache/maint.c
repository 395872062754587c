/*
 * maint.c - looking after the cache: list, verify (reconcile records with
 * files) and rm.  gc, which must stay fast over 100,000 images, has its
 * own compact gathering in gc.c.
 *
 * verify stats and checks every image, and so also notices clocks moved
 * backwards (touch -d) or images removed behind vigil's back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/adopt.h"
#include "common/buf.h"
#include "common/path.h"
#include "sif-cache/cache-int.h"

#define REF_MAX		65536

/* A growable array of 64-digit names (digest + NUL). */
struct names {
	char	(*v)[65];
	size_t	  n, cap;
};

/* Orders 65-byte names. */
static int
by_name(const void *a, const void *b)
{
	return memcmp(a, b, 64);
}

/* Orders records by digest. */
static int
by_rec(const void *a, const void *b)
{
	return memcmp(((const struct cache_rec *)a)->digest,
	    ((const struct cache_rec *)b)->digest, 64);
}

/* Appends an empty entry for digest d. */
static struct vg_cache_entry *
entry_add(struct vg_cache_list *l, const char *d)
{
	struct vg_cache_entry *ent;

	l->v = vg_xgrow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	ent = &l->v[l->n++];
	memset(ent, 0, sizeof(*ent));
	memcpy(ent->digest, d, 64);
	ent->digest[64] = '\0';
	ent->purge_at = INFINITY;
	return ent;
}

/* Binary search of a digest-sorted list. */
static struct vg_cache_entry *
entry_find(struct vg_cache_list *l, const char *d)
{
	size_t lo = 0, hi = l->n, mid;
	int r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = memcmp(l->v[mid].digest, d, 64);
		if (r == 0)
			return &l->v[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
vg_cache_list_release(struct vg_cache_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		vg_strv_release(&l->v[i].refs);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void
cache_entry_stat(struct vg_cache *c, struct vg_cache_entry *ent,
    const struct stat *st)
{
	ent->size = (uint64_t)st->st_size;
	ent->atime = (double)st->st_atim.tv_sec + st->st_atim.tv_nsec / 1e9;
	ent->mtime = (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9;
	ent->ctime = (double)st->st_ctim.tv_sec + st->st_ctim.tv_nsec / 1e9;
	ent->purge_at = vg_purge_eligible_at(&c->purge, st);
}

/* Reads one reference record: its ref, digest and pull time. */
static int
ref_load(const char *path, char **ref, char digest[65], double *pulled)
{
	struct vg_buf b = VG_BUF_INIT;
	char *line, *save = NULL;

	*ref = NULL;
	digest[0] = '\0';
	*pulled = 0;
	if (vg_read_file(path, REF_MAX, &b, NULL) != 0 || b.data == NULL) {
		vg_buf_release(&b);
		return -1;
	}
	for (line = strtok_r(b.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "ref ", 4) == 0 && *ref == NULL)
			*ref = vg_xstrdup(line + 4);
		else if (strncmp(line, "digest ", 7) == 0 &&
		    cache_is_digest_name(line + 7, ""))
			memcpy(digest, line + 7, 65);
		else if (strncmp(line, "pulled ", 7) == 0)
			*pulled = strtod(line + 7, NULL);
	}
	vg_buf_release(&b);
	if (*ref == NULL || digest[0] == '\0') {
		free(*ref);
		*ref = NULL;
		return -1;
	}
	return 0;
}

/* Options of gather: how much to learn about each entry. */
enum {
	G_STAT = 1 << 0,	/* stat every image */
	G_REFS = 1 << 1,	/* read reference records */
};

/*
 * Collects every image and record into l.  Without G_STAT, the purge
 * moment is estimated from the recorded pull time and confirmed by a
 * stat only when it falls before now + margin.
 */
static int
gather(struct vg_cache *c, unsigned how, struct vg_cache_list *l,
    struct vg_err *e)
{
	struct names *bucket;
	struct cache_recs recs;
	struct vg_cache_entry *ent;
	struct dirent *de;
	struct stat st;
	char d[65], host[256], *ref, *path;
	double now = vg_now(), exp, pulled, limit;
	size_t i, j, nsorted;
	long pid;
	DIR *dir;
	int rc = 0, b, dfd, cmp;

	memset(l, 0, sizeof(*l));
	limit = now + cache_margin(c);
	/*
	 * Images, by the shard their digest falls in: each shard is then
	 * merged with its records while both are small enough for the CPU
	 * cache, and the result comes out sorted by digest.
	 */
	bucket = vg_xcalloc(256, sizeof(*bucket));
	if ((dir = opendir(c->d_sha)) == NULL) {
		rc = vg_err_errno(e, "cannot read '%s'", c->d_sha);
		goto out;
	}
	while ((de = readdir(dir)) != NULL) {
		if (!cache_is_digest_name(de->d_name, ".sif"))
			continue;
		b = vg_hexval(de->d_name[0]) << 4 | vg_hexval(de->d_name[1]);
		bucket[b].v = vg_xgrow(bucket[b].v, &bucket[b].cap,
		    bucket[b].n + 1, sizeof(*bucket[b].v));
		memcpy(bucket[b].v[bucket[b].n], de->d_name, 64);
		bucket[b].v[bucket[b].n++][64] = '\0';
	}
	closedir(dir);
	/* one allocation for the common case: every image has a record */
	for (b = 0, i = 0; b < 256; b++)
		i += bucket[b].n;
	l->v = vg_xgrow(l->v, &l->cap, i + 16, sizeof(*l->v));

	for (b = 0; b < 256; b++) {
		path = vg_xasprintf("%s/%02x.rec", c->d_entries, b);
		memset(&recs, 0, sizeof(recs));
		rc = cache_recs_load(path, &recs, e);
		free(path);
		if (rc != 0)
			goto out;
		if (bucket[b].n > 1)
			qsort(bucket[b].v, bucket[b].n, sizeof(*bucket[b].v),
			    by_name);
		if (recs.n > 1)
			qsort(recs.v, recs.n, sizeof(*recs.v), by_rec);
		for (i = j = 0; i < bucket[b].n || j < recs.n; ) {
			if (i == bucket[b].n)
				cmp = 1;
			else if (j == recs.n)
				cmp = -1;
			else
				cmp = memcmp(bucket[b].v[i], recs.v[j].digest,
				    64);
			if (cmp > 0 && l->n > 0 && memcmp(l->v[l->n - 1].digest,
			    recs.v[j].digest, 64) == 0) {
				j++;		/* duplicate record line */
				continue;
			}
			ent = entry_add(l, cmp <= 0 ? bucket[b].v[i] :
			    recs.v[j].digest);
			if (cmp <= 0) {
				ent->present = 1;
				i++;
			}
			if (cmp >= 0) {
				ent->has_record = 1;
				ent->size = recs.v[j].size;
				ent->pulled = recs.v[j].pulled;
				ent->last_use = recs.v[j].last_use;
				j++;
			}
		}
		cache_recs_release(&recs);
		free(bucket[b].v);
		bucket[b].v = NULL;
	}

	for (i = 0; i < l->n; i++) {
		ent = &l->v[i];
		if (how & (G_STAT | G_REFS))
			ent->path = cache_image_path(c, ent->digest);
		if (!ent->present)
			continue;
		if (!(how & G_STAT)) {
			/* recorded clocks are a lower bound of the real ones */
			st.st_atim.tv_sec = st.st_mtim.tv_sec =
			    st.st_ctim.tv_sec = (time_t)ent->pulled;
			st.st_atim.tv_nsec = st.st_mtim.tv_nsec =
			    st.st_ctim.tv_nsec = 0;
			exp = ent->has_record ?
			    vg_purge_eligible_at(&c->purge, &st) : -INFINITY;
			if (exp > limit)
				continue;
		}
		if (ent->path == NULL)
			ent->path = cache_image_path(c, ent->digest);
		if (stat(ent->path, &st) == 0) {
			cache_entry_stat(c, ent, &st);
			if (!ent->has_record)
				ent->last_use = ent->mtime;
		}
	}

	/* pins */
	if ((dir = opendir(c->d_pins)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			if (cache_pin_parse(de->d_name, d, host, sizeof(host),
			    &pid, &exp) != 0 ||
			    !cache_pin_live(host, pid, exp, now))
				continue;
			if ((ent = entry_find(l, d)) != NULL)
				ent->npins++;
		}
		closedir(dir);
	}

	/* references; digests named only by a reference come last */
	nsorted = l->n;
	if ((how & G_REFS) && (dir = opendir(c->d_refs)) != NULL) {
		dfd = dirfd(dir);
		(void)dfd;
		while ((de = readdir(dir)) != NULL) {
			if (!cache_is_digest_name(de->d_name, ".ref"))
				continue;
			path = vg_path_join(c->d_refs, de->d_name);
			if (ref_load(path, &ref, d, &pulled) == 0) {
				ent = entry_find(l, d);
				for (j = nsorted; ent == NULL && j < l->n; j++)
					if (strcmp(l->v[j].digest, d) == 0)
						ent = &l->v[j];
				if (ent == NULL) {
					ent = entry_add(l, d);
					ent->path = cache_image_path(c, d);
				}
				vg_strv_take(&ent->refs, ref);
				if (pulled > ent->pulled)
					ent->pulled = pulled;
			}
			free(path);
		}
		closedir(dir);
	}
out:
	for (b = 0; b < 256; b++)
		free(bucket[b].v);
	free(bucket);
	if (rc != 0)
		vg_cache_list_release(l);
	return rc;
}

/* Orders entries by digest. */
static int
by_digest(const void *a, const void *b)
{
	return strcmp(((const struct vg_cache_entry *)a)->digest,
	    ((const struct vg_cache_entry *)b)->digest);
}

int
vg_cache_list(struct vg_cache *c, struct vg_cache_list *out,
    struct vg_err *e)
{
	int rc;

	if ((rc = gather(c, G_STAT | G_REFS, out, e)) != 0)
		return rc;
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_digest);
	return 0;
}

void
cache_refs_each(struct vg_cache *c, cache_ref_fn fn, void *arg)
{
	struct dirent *de;
	char d[65], *path, *ref;
	double pulled;
	DIR *dir;

	if ((dir = opendir(c->d_refs)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (!cache_is_digest_name(de->d_name, ".ref"))
			continue;
		path = vg_path_join(c->d_refs, de->d_name);
		if (ref_load(path, &ref, d, &pulled) == 0) {
			fn(arg, path, d);
			free(ref);
		}
		free(path);
	}
	closedir(dir);
}

/* cache_refs_each callback of cache_drop_refs. */
static void
drop_if(void *arg, const char *path, const char *digest)
{
	if (strcmp(digest, arg) == 0)
		(void)unlink(path);
}

void
cache_drop_refs(struct vg_cache *c, const char *digest)
{
	cache_refs_each(c, drop_if, (void *)(uintptr_t)digest);
}

int
cache_live_pins(struct vg_cache *c, const char *digest)
{
	struct dirent *de;
	char d[65], host[256];
	double exp, now = vg_now();
	long pid;
	DIR *dir;
	int n = 0;

	if ((dir = opendir(c->d_pins)) == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL)
		if (strncmp(de->d_name, digest, 64) == 0 &&
		    cache_pin_parse(de->d_name, d, host, sizeof(host), &pid,
		    &exp) == 0 && cache_pin_live(host, pid, exp, now))
			n++;
	closedir(dir);
	return n;
}

/* Formats a wall-clock time as UTC ISO 8601. */
static void
iso(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Pulls each recorded reference of ent again; 0 if one succeeded. */
static int
refresh_refs(struct vg_cache *c, const struct vg_cache_entry *ent,
    struct vg_buf *detail)
{
	struct vg_err pe;
	char *digest;
	size_t i;
	int ok = 0;

	for (i = 0; i < ent->refs.n; i++) {
		vg_err_init(&pe);
		if (vg_cache_pull(c, ent->refs.v[i], 0, &digest, &pe) == 0) {
			vg_buf_printf(detail, "; pulled again from '%s'",
			    ent->refs.v[i]);
			free(digest);
			ok = 1;
		} else {
			vg_buf_printf(detail, "; pulling '%s' failed: %s",
			    ent->refs.v[i], pe.msg);
		}
	}
	return ok ? 0 : -1;
}

static void	verify_records(struct vg_cache *, const char *, const char *,
		    vg_cache_report_fn, void *, size_t *);

int
vg_cache_verify(struct vg_cache *c, int refresh, vg_cache_report_fn fn,
    void *arg, size_t *nproblems, struct vg_err *e)
{
	struct vg_cache_list l;
	struct vg_cache_entry *ent;
	struct vg_buf detail = VG_BUF_INIT;
	struct vg_err ve;
	struct stat st, st2;
	enum vg_cache_problem what;
	double now = vg_now();
	char when[32];
	size_t i;
	int rc, fd;

	*nproblems = 0;
	if ((rc = gather(c, G_STAT | G_REFS, &l, e)) != 0)
		return rc;
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), by_digest);
	for (i = 0; i < l.n; i++) {
		ent = &l.v[i];
		vg_buf_reset(&detail);
		what = VG_CACHE_OK;
		if (!ent->present) {
			what = VG_CACHE_MISSING;
			vg_buf_adds(&detail, "image is gone (purged or removed "
			    "outside vigil)");
			if (!refresh || ent->refs.n == 0 ||
			    refresh_refs(c, ent, &detail) != 0) {
				(void)cache_rec_update(c, ent->digest, -1, -1,
				    0, 1, NULL);
				cache_drop_refs(c, ent->digest);
				vg_buf_adds(&detail, "; records removed");
			}
		} else {
			vg_err_init(&ve);
			fd = open(ent->path, O_RDONLY | O_CLOEXEC | O_NOATIME |
			    O_NOFOLLOW);
			if (fd < 0 && errno == EPERM)
				fd = open(ent->path, O_RDONLY | O_CLOEXEC |
				    O_NOFOLLOW);
			if (fd < 0)
				vg_err_errno(&ve, "cannot open '%s'",
				    ent->path);
			else if (vg_sif_verify_fd(fd, ent->path, NULL,
			    &ve) == VG_EUNSUPPORTED)
				ve.rc = 0;	/* another node's image */
			/* Its content is its address, hashed in full. */
			if (fd >= 0 && ve.rc == 0 && cache_content_check(c,
			    fd, ent->path, ent->digest, 0, &ve) != 0) {
				what = VG_CACHE_TAMPERED;
				vg_buf_printf(&detail, "%s (resolve hashes it "
				    "and pulls again)", ve.msg);
			} else if (ve.rc != 0) {
				what = VG_CACHE_CORRUPT;
				vg_buf_printf(&detail, "%s; removed", ve.msg);
				/* only the file we checked, not a new pull */
				if (fd >= 0 && fstat(fd, &st) == 0 &&
				    stat(ent->path, &st2) == 0 &&
				    st.st_ino == st2.st_ino)
					(void)unlink(ent->path);
				(void)cache_rec_update(c, ent->digest, -1, -1,
				    0, 1, NULL);
				cache_drop_refs(c, ent->digest);
			} else if (!ent->has_record) {
				what = VG_CACHE_UNRECORDED;
				vg_buf_adds(&detail, "record added");
				(void)cache_rec_update(c, ent->digest,
				    (int64_t)ent->size, ent->mtime, 0, 0,
				    NULL);
			} else if (ent->purge_at <= now + cache_margin(c)) {
				what = VG_CACHE_EXPIRING;
				iso(ent->purge_at, when, sizeof(when));
				vg_buf_printf(&detail, "eligible for purge at "
				    "%s", when);
				if (refresh)
					(void)refresh_refs(c, ent, &detail);
			}
			if (fd >= 0)
				close(fd);
		}
		if (what == VG_CACHE_OK)
			continue;
		(*nproblems)++;
		if (fn != NULL)
			fn(arg, ent, what, vg_buf_str(&detail));
	}
	verify_records(c, c->d_refs, ".ref", fn, arg, nproblems);
	verify_records(c, c->d_locks, ".lock", fn, arg, nproblems);
	vg_buf_release(&detail);
	vg_cache_list_release(&l);
	return 0;
}

/*
 * Reports the records of dir (names ending in suffix) that are never
 * believed: not a regular file (a FIFO, a link), written by a user who
 * is not a trusted writer, or writable by others.
 */
static void
verify_records(struct vg_cache *c, const char *dir, const char *suffix,
    vg_cache_report_fn fn, void *arg, size_t *nproblems)
{
	struct vg_cache_entry ent;
	struct vg_buf detail = VG_BUF_INIT, who = VG_BUF_INIT;
	struct dirent *de;
	struct stat st;
	size_t n;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	memset(&ent, 0, sizeof(ent));
	snprintf(ent.digest, sizeof(ent.digest), "-");
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n <= strlen(suffix) || strcmp(de->d_name + n -
		    strlen(suffix), suffix) != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		vg_buf_reset(&detail);
		vg_buf_reset(&who);
		vg_owner_desc(st.st_uid, &who);
		if (!S_ISREG(st.st_mode))
			vg_buf_printf(&detail, "'%s/%s' is not a regular file; "
			    "never read", dir, de->d_name);
		else if (!cache_trusted(c, st.st_uid))
			vg_buf_printf(&detail, "'%s/%s' was written by %s, "
			    "who is not in cache.trusted_writers; never "
			    "believed", dir, de->d_name, vg_buf_str(&who));
		else if (st.st_mode & 022)
			vg_buf_printf(&detail, "'%s/%s' is writable by others "
			    "(mode %04o)", dir, de->d_name,
			    (unsigned)(st.st_mode & 07777));
		else
			continue;
		(*nproblems)++;
		if (fn != NULL)
			fn(arg, &ent, VG_CACHE_UNTRUSTED, vg_buf_str(&detail));
	}
	closedir(d);
	vg_buf_release(&detail);
	vg_buf_release(&who);
}

int
vg_cache_rm(struct vg_cache *c, const char *what, int force,
    struct vg_err *e)
{
	struct vg_cache_list l;
	const struct vg_cache_entry *hit = NULL;
	size_t i, n = strlen(what), nhit = 0;
	int rc, pins, is_hex = n >= 8 && n <= 64;

	for (i = 0; is_hex && i < n; i++)
		if (!((what[i] >= '0' && what[i] <= '9') ||
		    (what[i] >= 'a' && what[i] <= 'f')))
			is_hex = 0;
	if ((rc = gather(c, G_REFS, &l, e)) != 0)
		return rc;
	for (i = 0; i < l.n; i++) {
		size_t j;
		int match = is_hex && strncmp(l.v[i].digest, what, n) == 0;

		for (j = 0; !match && j < l.v[i].refs.n; j++)
			match = strcmp(l.v[i].refs.v[j], what) == 0;
		if (match) {
			hit = &l.v[i];
			nhit++;
		}
	}
	if (nhit == 0) {
		rc = vg_err_set(e, VG_ENOENT, "no cached image matches '%s' "
		    "(give a reference as pulled, or 8+ hex digits of a "
		    "digest)", what);
		goto out;
	}
	if (nhit > 1) {
		rc = vg_err_set(e, VG_EINVAL, "'%s' matches %zu cached images; "
		    "give more digits", what, nhit);
		goto out;
	}
	pins = cache_live_pins(c, hit->digest);
	if (pins > 0 && !force) {
		rc = vg_err_set(e, VG_EDENIED, "image %.12s is in use by %d "
		    "running task%s (pinned); --force removes it anyway",
		    hit->digest, pins, pins == 1 ? "" : "s");
		goto out;
	}
	(void)unlink(hit->path);
	(void)cache_rec_update(c, hit->digest, -1, -1, 0, 1, NULL);
	cache_drop_refs(c, hit->digest);
out:
	vg_cache_list_release(&l);
	return rc;
}

/*
 * gc.c - vigil cache gc: purge-aligned expiry, then LRU to the quota.
 *
 * Planning over 100,000 images must stay well under 200 ms, and on the
 * virtual machines and busy login nodes where it runs, touching fresh
 * memory (a page fault per 4 KiB) costs as much as the work itself.  So
 * gc keeps per image only what the plan needs:
 *
 *   - the digests in sha256/, 32 bytes each in one array, bucketed by
 *     their first byte in place and sorted per bucket;
 *   - a key per quota candidate (last use and size), in digest order;
 *   - a full entry only for the few images that are stat()ed (those
 *     whose recorded pull time puts them near the purge age, and images
 *     without a record) and for records whose image is gone.
 *
 * The 256 record shards are each read with one read() into one reused
 * buffer and parsed in place; paths and hex digests are made only for
 * the entries reported or removed, whose records go one shard rewrite at
 * a time.  Real clocks only move forward from
 * the pull, so the recorded pull time is a lower bound of an image's
 * purge clock and a stat decides only near the purge age; `cache verify`
 * stats every image and catches clocks moved backwards.
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

#include "common/buf.h"
#include "common/path.h"
#include "sif-cache/cache-int.h"
#include "sif-cache/evict.h"
#include "sif-cache/lock.h"

#define REC_MAX		(64u << 20)	/* a shard: 100,000+ lines */
#define IOBUF		(128u << 10)	/* getdents64 and shard reads */
#define NAME_BYTES	64		/* a directory entry, at least */

/* A record line, parsed. */
struct gc_rec {
	unsigned char	 d[32];
	uint64_t	 size;
	double		 pulled, last_use;
	size_t		 line;		/* keeps the first of duplicates */
};

/* sort_bucket moves elements through a 64-byte buffer */
_Static_assert(sizeof(struct gc_rec) <= 64 && sizeof(struct gc_rec) % 8 == 0,
    "gc_rec does not suit sort_bucket");

/* An entry that needs more than a key: stat()ed or missing. */
struct gc_side {
	struct vg_cache_entry	 ent;	/* path NULL, no refs */
	enum vg_cache_evict_why	 why;
	size_t			 ord;	/* place in digest order */
};

/* What gc learns about the cache; arrays are owned. */
struct gc_plan {
	unsigned char		(*img)[32];	/* images, by digest */
	size_t			  nimg, capimg;
	size_t			  count[256];	/* images per first byte */
	unsigned char		(*pin)[32];	/* live pins, sorted */
	size_t			  npin, cappin;
	struct gc_side		 *side;		/* by ord */
	size_t			  nside, capside;
	struct vg_evict_key	 *key;		/* quota candidates */
	size_t			  nkey, capkey;
	size_t			  nord;		/* entries in all */
	struct gc_rec		 *rec;		/* one shard, reused */
	size_t			  caprec;
	char			 *io;		/* I/O buffer, reused */
	size_t			  capio;
};

/* Orders 32-byte digests. */
static int
by_digest(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* Orders records by digest, then by line. */
static int
by_rec(const void *a, const void *b)
{
	const struct gc_rec *x = a, *y = b;
	int r = memcmp(x->d, y->d, 32);

	if (r != 0)
		return r;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Copies es bytes (a multiple of 8) by words: memcpy of a size known only
 * at run time becomes "rep movs", whose start-up dwarfs 32 bytes.
 */
static inline void
copy_words(unsigned char *dst, const unsigned char *src, size_t es)
{
	uint64_t w;
	size_t i;

	for (i = 0; i < es; i += 8) {
		memcpy(&w, src + i, 8);
		memcpy(dst + i, &w, 8);
	}
}

/*
 * Sorts n elements of es bytes (a multiple of 8, at most 64) that start with a digest
 * and share its first byte: in place by the second byte (American flag
 * sort), then each run of equal second bytes (one or two elements, for
 * a few hundred) by insertion with cmp.  Linear where qsort would make
 * some 3,000 indirect comparisons per shard.
 */
static void
sort_bucket(void *base, size_t n, size_t es,
    int (*cmp)(const void *, const void *))
{
	unsigned char *v = base, t[64];
	size_t count[256] = { 0 }, next[256], end[256], i, j, at;
	int b, to;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		count[v[i * es + 1]]++;
	for (b = 0, at = 0; b < 256; b++) {
		next[b] = at;
		at += count[b];
		end[b] = at;
	}
	for (b = 0; b < 256; b++) {
		while (next[b] < end[b]) {
			to = v[next[b] * es + 1];
			if (to == b) {
				next[b]++;
				continue;
			}
			i = next[to]++;
			copy_words(t, v + i * es, es);
			copy_words(v + i * es, v + next[b] * es, es);
			copy_words(v + next[b] * es, t, es);
		}
	}
	for (b = 0, at = 0; b < 256; at += count[b++]) {
		for (i = at + 1; i < at + count[b]; i++) {
			copy_words(t, v + i * es, es);
			for (j = i; j > at && cmp(v + (j - 1) * es, t) > 0; j--)
				copy_words(v + j * es, v + (j - 1) * es,
				    es);
			copy_words(v + j * es, t, es);
		}
	}
}

/* Frees what p holds. */
static void
plan_release(struct gc_plan *p)
{
	free(p->img);
	free(p->pin);
	free(p->side);
	free(p->key);
	free(p->rec);
	free(p->io);
	memset(p, 0, sizeof(*p));
}

/* Live pins, sorted by digest; a missing pins/ directory has none. */
static void
read_pins(struct vg_cache *c, struct gc_plan *p, double now)
{
	struct dirent *de;
	char d[65], host[256];
	double exp;
	long pid;
	DIR *dir;

	if ((dir = opendir(c->d_pins)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (cache_pin_parse(de->d_name, d, host, sizeof(host), &pid,
		    &exp) != 0 || !cache_pin_live(host, pid, exp, now))
			continue;
		p->pin = vg_xgrow(p->pin, &p->cappin, p->npin + 1,
		    sizeof(*p->pin));
		(void)cache_digest_bin(d, p->pin[p->npin++]);
	}
	closedir(dir);
	if (p->npin > 1)
		qsort(p->pin, p->npin, sizeof(*p->pin), by_digest);
}

/* How many live pins digest d has. */
static int
pins_of(const struct gc_plan *p, const unsigned char *d)
{
	size_t lo = 0, hi = p->npin, mid;
	int n = 0;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (memcmp(p->pin[mid], d, 32) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < p->npin && memcmp(p->pin[lo], d, 32) == 0) {
		n++;
		lo++;
	}
	return n;
}

/*
 * Reads the names in sha256/ into p->img with getdents64 and a large
 * buffer (a few dozen system calls for 100,000 names), then orders them
 * by digest: in place by first byte, then each bucket by sort_bucket.
 */
static int
read_images(struct vg_cache *c, struct gc_plan *p, struct vg_err *e)
{
	size_t next[256], end[256], i, at;
	struct dirent64 *de;
	struct stat st;
	unsigned char t[32];
	ssize_t n, off;
	int fd, b, to;

	fd = open(c->d_sha, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return vg_err_errno(e, "cannot read '%s'", c->d_sha);
	/*
	 * Size the array once from the directory's size (an entry takes at
	 * least NAME_BYTES on ext4, XFS and Lustre); pages beyond what is
	 * used are never touched, and file systems that report less grow it.
	 */
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		p->img = vg_xgrow(p->img, &p->capimg,
		    (size_t)st.st_size / NAME_BYTES + 64, sizeof(*p->img));
	for (;;) {
		n = getdents64(fd, p->io, p->capio);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return vg_err_errno(e, "cannot read '%s'", c->d_sha);
		}
		if (n == 0)
			break;
		for (off = 0; off < n; off += de->d_reclen) {
			de = (struct dirent64 *)(void *)(p->io + off);
			if (strlen(de->d_name) != 68 ||
			    strcmp(de->d_name + 64, ".sif") != 0 ||
			    cache_digest_bin(de->d_name, t) != 0)
				continue;
			p->img = vg_xgrow(p->img, &p->capimg, p->nimg + 1,
			    sizeof(*p->img));
			memcpy(p->img[p->nimg++], t, 32);
			p->count[t[0]]++;
		}
	}
	close(fd);
	/* in-place bucketing by first byte (American flag sort) */
	for (b = 0, at = 0; b < 256; b++) {
		next[b] = at;
		at += p->count[b];
		end[b] = at;
	}
	for (b = 0; b < 256; b++) {
		while (next[b] < end[b]) {
			to = p->img[next[b]][0];
			if (to == b) {
				next[b]++;
				continue;
			}
			i = next[to]++;
			memcpy(t, p->img[i], 32);
			memcpy(p->img[i], p->img[next[b]], 32);
			memcpy(p->img[next[b]], t, 32);
		}
	}
	for (b = 0, at = 0; b < 256; at += p->count[b++])
		sort_bucket(p->img + at, p->count[b], sizeof(*p->img),
		    by_digest);
	return 0;
}

/*
 * Reads entries/<b>.rec into p->io with one read() where the file allows
 * and parses it into p->rec, sorted by digest; lines that belong to
 * another shard or do not parse are skipped.  *nrec counts them.  A
 * missing shard is empty.
 */
static int
read_shard(struct vg_cache *c, int dfd, int b, struct gc_plan *p,
    size_t *nrec, struct vg_err *e)
{
	char name[8], *line, *nl, *stop;
	struct gc_rec *r;
	struct stat st;
	size_t len = 0, want, nline = 0;
	ssize_t n;
	int fd, rc = 0;

	*nrec = 0;
	snprintf(name, sizeof(name), "%02x.rec", b);
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return vg_err_errno(e, "cannot open '%s/%s'", c->d_entries,
		    name);
	}
	/*
	 * Records are replaced by rename, never changed in place: once the
	 * size fstat() gave is read, the file is complete.
	 */
	if (fstat(fd, &st) != 0 || st.st_size <= 0)
		st.st_size = -1;
	if (st.st_size > (off_t)REC_MAX) {
		close(fd);
		return vg_err_set(e, VG_ELIMIT, "'%s/%s' is larger than %u "
		    "bytes", c->d_entries, name, REC_MAX);
	}
	want = st.st_size > 0 ? (size_t)st.st_size : 4096;
	for (;;) {
		if (len + want + 1 > p->capio)
			p->io = vg_xgrow(p->io, &p->capio, len + want + 1, 1);
		n = read(fd, p->io + len, p->capio - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = vg_err_errno(e, "cannot read '%s/%s'",
			    c->d_entries, name);
			break;
		}
		len += (size_t)n;
		if (len > REC_MAX) {
			rc = vg_err_set(e, VG_ELIMIT, "'%s/%s' is larger than "
			    "%u bytes", c->d_entries, name, REC_MAX);
			break;
		}
		if (n == 0 || (off_t)len == st.st_size)
			break;
		want = 65536;
	}
	close(fd);
	if (rc != 0)
		return rc;
	p->io[len] = '\0';
	stop = p->io + len;
	for (line = p->io; line < stop; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(stop - line))) == NULL)
			nl = stop;
		*nl = '\0';
		p->rec = vg_xgrow(p->rec, &p->caprec, *nrec + 1,
		    sizeof(*p->rec));
		r = &p->rec[*nrec];
		if (nl - line < 70 || cache_rec_parse(line, r->d, &r->size,
		    &r->pulled, &r->last_use) != 0 || r->d[0] != b)
			continue;
		r->line = nline++;
		(*nrec)++;
	}
	sort_bucket(p->rec, *nrec, sizeof(*p->rec), by_rec);
	return 0;
}

/* Appends a side entry for digest d at the current place. */
static struct gc_side *
side_add(struct gc_plan *p, const unsigned char *d)
{
	struct gc_side *s;

	p->side = vg_xgrow(p->side, &p->capside, p->nside + 1,
	    sizeof(*p->side));
	s = &p->side[p->nside++];
	memset(s, 0, sizeof(*s));
	cache_digest_hex(d, s->ent.digest);
	s->ent.purge_at = INFINITY;
	s->ord = p->nord;
	return s;
}

/* Totals of the entries that stay after the purge step. */
struct gc_sums {
	uint64_t	 bytes, count;
};

/*
 * Plans one entry: the image d (when img) and its record (rec, or
 * NULL).  Stats the image only when its record puts it near the purge
 * age, or when it has no record.
 */
static void
plan_entry(struct vg_cache *c, struct gc_plan *p, const unsigned char *d,
    int img, const struct gc_rec *rec, double now, double margin,
    struct gc_sums *sums, struct vg_cache_gc_stats *gs)
{
	struct gc_side *s = NULL;
	struct stat st;
	double exp = -INFINITY, last_use = 0;
	uint64_t size = 0;
	int npins = p->npin > 0 ? pins_of(p, d) : 0;

	if (rec != NULL) {
		size = rec->size;
		last_use = rec->last_use;
	}
	if (img && rec != NULL) {
		/* recorded clocks are a lower bound of the real ones */
		memset(&st, 0, sizeof(st));
		st.st_atim.tv_sec = st.st_mtim.tv_sec = st.st_ctim.tv_sec =
		    (time_t)rec->pulled;
		exp = vg_purge_eligible_at(&c->purge, &st);
	}
	if (!img || exp <= now + margin) {
		s = side_add(p, d);
		s->ent.present = img;
		s->ent.has_record = rec != NULL;
		s->ent.npins = npins;
		s->ent.size = size;
		s->ent.last_use = last_use;
		if (rec != NULL)
			s->ent.pulled = rec->pulled;
	}
	if (s != NULL && img) {
		char *path = cache_image_path(c, s->ent.digest);

		if (stat(path, &st) == 0) {
			cache_entry_stat(c, &s->ent, &st);
			if (rec == NULL)
				s->ent.last_use = s->ent.mtime;
		}
		free(path);
		size = s->ent.size;
		last_use = s->ent.last_use;
	}
	if (s != NULL) {
		s->why = vg_evict_classify(!img, npins > 0, s->ent.purge_at,
		    now, margin);
	}
	p->nord++;
	if (!img) {
		gs->removed++;
		return;
	}
	gs->entries++;
	gs->bytes += size;
	if (s != NULL && s->why == VG_EVICT_PURGE) {
		gs->removed++;
		gs->freed += size;
		return;
	}
	if (npins > 0) {
		gs->pinned++;
	} else {
		p->key = vg_xgrow(p->key, &p->capkey, p->nkey + 1,
		    sizeof(*p->key));
		p->key[p->nkey++] = (struct vg_evict_key){
		    .last_use = last_use, .size = size };
	}
	sums->bytes += size;
	sums->count++;
}

/*
 * Gathers and plans: images, pins, then each shard merged with its
 * bucket of images in digest order.  *cut names the quota's choices among
 * p->key.
 */
static int
plan(struct vg_cache *c, struct gc_plan *p, struct vg_cache_gc_stats *gs,
    struct vg_evict_cut *cut, struct vg_err *e)
{
	struct gc_sums sums = { 0, 0 };
	double now = vg_now(), margin = cache_margin(c);
	size_t at = 0, i, j, nrec, nb, k;
	int b, dfd, cmp, rc = 0;

	p->io = vg_xgrow(p->io, &p->capio, IOBUF, 1);
	if ((rc = read_images(c, p, e)) != 0)
		return rc;
	read_pins(c, p, now);
	/* every image with a record is a candidate in the common case */
	p->key = vg_xgrow(p->key, &p->capkey, p->nimg + 1, sizeof(*p->key));
	dfd = open(c->d_entries, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return vg_err_errno(e, "cannot read '%s'", c->d_entries);
	for (b = 0; b < 256; b++, at += nb) {
		nb = p->count[b];
		if ((rc = read_shard(c, dfd, b, p, &nrec, e)) != 0)
			break;
		for (i = j = 0; i < nb || j < nrec; ) {
			if (i == nb)
				cmp = 1;
			else if (j == nrec)
				cmp = -1;
			else
				cmp = memcmp(p->img[at + i], p->rec[j].d, 32);
			plan_entry(c, p, cmp <= 0 ? p->img[at + i] :
			    p->rec[j].d, cmp <= 0, cmp >= 0 ? &p->rec[j] :
			    NULL, now, margin, &sums, gs);
			if (cmp <= 0)
				i++;
			if (cmp >= 0) {
				/* duplicate lines: the first one counts */
				for (k = j++; j < nrec && memcmp(p->rec[j].d,
				    p->rec[k].d, 32) == 0; j++)
					;
			}
		}
	}
	close(dfd);
	if (rc != 0)
		return rc;
	vg_evict_select(p->key, p->nkey, sums.bytes, sums.count,
	    c->quota_bytes, c->quota_entries, cut, &gs->over_quota);
	return 0;
}

/*
 * Removes an image unless it is pinned: renames it aside first, so that a
 * resolver pinning it meanwhile either finds it back or finds it gone
 * (and pulls), never a half-removed file.  1 when removed (or already
 * gone), 0 when pinned.  Its records are the caller's to remove.
 */
static int
remove_image(struct vg_cache *c, const char *digest, const char *path)
{
	char *aside;
	int removed = 1;

	aside = vg_xasprintf("%s/%s.gc.%s.%ld", c->d_tmp, digest,
	    vg_lock_hostname(), (long)getpid());
	if (rename(path, aside) == 0) {
		if (cache_live_pins(c, digest) > 0) {
			(void)rename(aside, path);
			removed = 0;
		} else {
			(void)unlink(aside);
		}
	}
	free(aside);
	return removed;
}

/* A reference record and the digest it names. */
struct gc_ref {
	unsigned char	 d[32];
	char		*path;
};

/*
 * Records to remove after their images, one shard at a time, so that
 * 10,000 removals rewrite each shard once and read the reference records
 * once, not once per image.
 */
struct gc_done {
	unsigned char	(*d)[32];	/* sorted: gc walks in digest order */
	size_t		  n, cap;
	struct gc_ref	 *ref;		/* sorted by digest once read */
	size_t		  nref, capref;
	int		  refs_read;
};

/* cache_refs_each callback: indexes one reference record. */
static void
index_ref(void *arg, const char *path, const char *digest)
{
	struct gc_done *g = arg;

	g->ref = vg_xgrow(g->ref, &g->capref, g->nref + 1, sizeof(*g->ref));
	(void)cache_digest_bin(digest, g->ref[g->nref].d);
	g->ref[g->nref++].path = vg_xstrdup(path);
}

/* Orders reference records by digest. */
static int
by_ref(const void *a, const void *b)
{
	return memcmp(((const struct gc_ref *)a)->d,
	    ((const struct gc_ref *)b)->d, 32);
}

/* Removes the records and references of the queued digests. */
static void
done_flush(struct vg_cache *c, struct gc_done *g)
{
	size_t i, lo, hi, mid;

	if (g->n == 0)
		return;
	(void)cache_recs_remove(c, g->d[0][0], (const unsigned char (*)[32])
	    g->d, g->n, NULL);
	if (!g->refs_read) {
		cache_refs_each(c, index_ref, g);
		if (g->nref > 1)
			qsort(g->ref, g->nref, sizeof(*g->ref), by_ref);
		g->refs_read = 1;
	}
	for (i = 0; i < g->n; i++) {
		for (lo = 0, hi = g->nref; lo < hi; ) {
			mid = lo + (hi - lo) / 2;
			if (memcmp(g->ref[mid].d, g->d[i], 32) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < g->nref && memcmp(g->ref[lo].d, g->d[i], 32) == 0;
		    lo++)
			(void)unlink(g->ref[lo].path);
	}
	g->n = 0;
}

/* Queues digest d, flushing the previous shard's queue first. */
static void
done_add(struct vg_cache *c, struct gc_done *g, const char *digest)
{
	unsigned char d[32];

	(void)cache_digest_bin(digest, d);
	if (g->n > 0 && g->d[0][0] != d[0])
		done_flush(c, g);
	g->d = vg_xgrow(g->d, &g->cap, g->n + 1, sizeof(*g->d));
	memcpy(g->d[g->n++], d, 32);
}

/* Frees what g holds. */
static void
done_release(struct gc_done *g)
{
	size_t i;

	for (i = 0; i < g->nref; i++)
		free(g->ref[i].path);
	free(g->ref);
	free(g->d);
	memset(g, 0, sizeof(*g));
}

/* Removes stale pins and the leftovers of interrupted pulls. */
static void
sweep(struct vg_cache *c)
{
	struct dirent *de;
	struct stat st;
	char d[65], host[256], *path, *dot;
	double exp, now = vg_now();
	long pid;
	DIR *dir;

	if ((dir = opendir(c->d_pins)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			if (cache_pin_parse(de->d_name, d, host, sizeof(host),
			    &pid, &exp) != 0 ||
			    cache_pin_live(host, pid, exp, now))
				continue;
			path = vg_path_join(c->d_pins, de->d_name);
			(void)unlink(path);
			free(path);
		}
		closedir(dir);
	}
	/* tmp/<host>.<pid>.<n>.<ext>: the puller is dead or a day passed */
	if ((dir = opendir(c->d_tmp)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		path = vg_path_join(c->d_tmp, de->d_name);
		snprintf(host, sizeof(host), "%s", de->d_name);
		pid = 0;
		if ((dot = strchr(host, '.')) != NULL) {
			*dot = '\0';
			pid = strtol(dot + 1, NULL, 10);
		}
		if (vg_lock_owner_dead(host, pid) || (stat(path, &st) == 0 &&
		    (double)st.st_mtim.tv_sec < now - 86400))
			(void)unlink(path);
		free(path);
	}
	closedir(dir);
}

/*
 * Acts on one planned removal (unless dry_run) and reports it; ent->path
 * is set here.  0 when the image was pinned since planning and stays.
 */
static int
apply(struct vg_cache *c, int dry_run, struct vg_cache_entry *ent,
    enum vg_cache_evict_why why, char *path, size_t size,
    struct gc_done *done, vg_cache_gc_fn fn, void *arg)
{
	snprintf(path, size, "%s/%s.sif", c->d_sha, ent->digest);
	ent->path = path;
	if (!dry_run) {
		if (why != VG_EVICT_MISSING &&
		    !remove_image(c, ent->digest, path)) {
			ent->path = NULL;
			return 0;
		}
		done_add(c, done, ent->digest);
	}
	if (fn != NULL)
		fn(arg, ent, why);
	ent->path = NULL;
	return 1;
}

int
vg_cache_gc(struct vg_cache *c, int dry_run, vg_cache_gc_fn fn, void *arg,
    struct vg_cache_gc_stats *st, struct vg_err *e)
{
	struct gc_plan p;
	struct gc_done done;
	struct vg_cache_entry tmp, *ent;
	struct vg_evict_cut cut;
	enum vg_cache_evict_why why;
	size_t ord, si = 0, ii = 0, ki = 0, ties, psize;
	char *path;
	int rc, cand;

	memset(st, 0, sizeof(*st));
	memset(&p, 0, sizeof(p));
	memset(&done, 0, sizeof(done));
	if ((rc = plan(c, &p, st, &cut, e)) != 0) {
		plan_release(&p);
		return rc;
	}
	psize = strlen(c->d_sha) + 70;
	path = vg_xmalloc(psize);
	ties = cut.ties;
	/*
	 * One walk in digest order over side entries and images, meeting the
	 * quota candidates in the order plan_entry made their keys.
	 */
	for (ord = 0; ord < p.nord; ord++) {
		if (si < p.nside && p.side[si].ord == ord) {
			ent = &p.side[si].ent;
			why = p.side[si++].why;
			if (ent->present)
				ii++;
			cand = ent->present && why == VG_EVICT_KEEP &&
			    ent->npins == 0;
		} else {
			ent = NULL;
			why = VG_EVICT_KEEP;
			cand = p.npin == 0 || pins_of(&p, p.img[ii]) == 0;
			ii++;
		}
		if (cand && vg_evict_goes(&cut, p.key[ki].last_use, &ties)) {
			why = VG_EVICT_QUOTA;
			st->removed++;
			st->freed += p.key[ki].size;
			if (ent == NULL) {
				memset(&tmp, 0, sizeof(tmp));
				cache_digest_hex(p.img[ii - 1], tmp.digest);
				tmp.present = tmp.has_record = 1;
				tmp.size = p.key[ki].size;
				tmp.last_use = p.key[ki].last_use;
				tmp.purge_at = INFINITY;
				ent = &tmp;
			}
		}
		ki += cand;
		if (why == VG_EVICT_KEEP)
			continue;
		if (!apply(c, dry_run, ent, why, path, psize, &done, fn,
		    arg)) {
			/* pinned since planning: keep it */
			st->removed--;
			st->freed -= ent->size;
			st->pinned++;
		}
	}
	done_flush(c, &done);
	done_release(&done);
	free(path);
	if (!dry_run)
		sweep(c);
	plan_release(&p);
	return 0;
}

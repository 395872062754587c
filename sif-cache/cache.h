/*
 * cache.h - a content-addressed cache of SIF images on a shared (and
 * possibly purged) filesystem.
 *
 * Layout under the cache directory; the files are the truth, there is no
 * database, so any number of processes on any number of nodes may share
 * one cache over NFS or Lustre:
 *
 *   sha256/<digest>.sif		the images, named by their sha256
 *   refs/<sha256(arch ref)>.ref	"ref -> digest, when pulled, from where"
 *   entries/<xx>.rec			one line per image whose digest
 *					starts with xx: size, when pulled,
 *					last use
 *   pins/<digest>.<host>.<pid>.<expiry>.<n>
 *					a lease held by a task using the image
 *   locks/<sha256(arch ref)>.lock	a pull in progress (lock.h)
 *   tmp/				pulls in flight, renamed when verified
 *
 * Every record is written atomically (temp file, fsync, rename).  Every
 * use verifies that the image exists and that its SIF header is sound
 * (sif.h); a truncated or corrupt image is removed and pulled again, never
 * handed out.  A pull goes to tmp/, is verified (header, and the digest
 * when the reference pins one), fsynced and renamed into sha256/; a
 * link()-based lock with a lease makes concurrent resolvers of one
 * reference pull it once.  The lock only prevents duplicate work: an
 * image under its final name is complete and verified whoever wrote it.
 *
 * vigil never changes an image's times to dodge a site purge; reads made
 * for verification use O_NOATIME where the kernel allows it.  Last use is
 * vigil's own record (entries/), since atime is unreliable under relatime
 * and noatime.
 *
 * What this file leaves to others: running the image (backends/), choosing
 * the scratch base that holds the default cache directory (scratch/), the
 * purge rules themselves (scratch/purge.h), quota and LRU planning
 * (evict.h).
 */
#ifndef VG_CACHE_H
#define VG_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/plugin.h"
#include "scratch/purge.h"
#include "sif-cache/sif.h"

struct vg_cache_conf {
	char			*dir;
	uint64_t		 quota_bytes;
	uint64_t		 quota_entries;
	struct vg_purge_conf	 purge;
	double			 lock_lease;	/* seconds */
	double			 lock_wait;	/* seconds */
	struct vg_strv		 trusted_writers; /* config only: users whose
						   refs/ records are believed */
};

/* The cache: section (the SIF cache; listed by the singularity backend,
 * read by `vigil cache` too). */
extern const struct vg_msection vg_cache_msection;

/* The cache section of m (defaulted; owned by m). */
static inline struct vg_cache_conf *
vg_cache_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_cache_msection);
}

struct vg_cache;
struct vg_cache_pin;

/* ref without credentials, as stored and shown: no user:password@, no
 * query (presigned URLs carry their signature there).  Caller frees. */
char	*vg_cache_ref_public(const char *ref);

/* Defaults when the configuration leaves a field at 0. */
/* seconds a lock lives unrefreshed */
#define VG_CACHE_LOCK_LEASE	60.0
/* seconds a resolver waits for another's pull */
#define VG_CACHE_LOCK_WAIT	3600.0
/* purge safety margin beyond the need, seconds */
#define VG_CACHE_MARGIN		86400

/*
 * Opens (creating as needed, mode 0755) the cache directory: conf->dir,
 * else $VIGIL_SIF_CACHE, else default_dir (which may be NULL when one of
 * the others is set).  conf may be NULL (defaults: no quota, no purge
 * policy, the lease and wait above); it is copied, so the caller may free
 * it afterwards.  A purge preset or clock that does not exist fails with
 * VG_EINVAL naming the valid ones.  On success *out is owned by the caller
 * (vg_cache_close).  Does not block beyond mkdir.
 */
int	vg_cache_open(const struct vg_cache_conf *conf,
	    const char *default_dir, struct vg_cache **out, struct vg_err *e);

/* Directory name of the default cache under the scratch base. */
#define VG_CACHE_DEFAULT_NAME	"vigil-sif-cache"

/*
 * Opens the cache where vigil looks for it: conf->dir, else
 * $VIGIL_SIF_CACHE, else <scratch base>/vigil-sif-cache, the base chosen
 * from scratch (may be NULL) and the state directory as for a run
 * (vg_scratch_base; only consulted when the first two are unset, so an
 * unusable $VIGIL_SCRATCH does not stop a cache that is set explicitly).
 * Otherwise as vg_cache_open.
 */
int	vg_cache_open_default(const struct vg_cache_conf *conf,
	    const struct vg_scratch_conf *scratch, struct vg_cache **out,
	    struct vg_err *e);

/*
 * A warning when the cache sits on a filesystem that sites purge (under
 * /scratch, $SCRATCH, $PSCRATCH or $VIGIL_SCRATCH) and the configuration
 * names no purge rule, not even `none`: vigil cannot then refresh images
 * before the site deletes them.  NULL when there is nothing to say.
 * Borrowed from c.
 */
const char *vg_cache_purge_warning(struct vg_cache *c);

/* The cache directory, borrowed from c. */
const char *vg_cache_dir(const struct vg_cache *c);

/*
 * The program used for registry pulls (docker://, oras://, library://).
 * NULL or "" (the default) looks up apptainer, then singularity, in PATH.
 * The string is copied.
 */
void	vg_cache_set_puller(struct vg_cache *c, const char *binary);

/*
 * Resolves ref to the path of a verified local SIF image that the site
 * purge policy will not make eligible for deletion before needed_until
 * (wall-clock seconds, e.g. vg_now() + the task's time limit; 0 = now)
 * plus the safety margin.  ref is one of:
 *
 *   /path/to/image.sif, ./x.sif	used in place: verified, not cached,
 *					not pinned (*pin_out is NULL)
 *   docker://, oras://, library://	pulled with `apptainer pull`
 *   https://host/x.sif[@sha256:HEX]	fetched with libcurl; the digest,
 *					when given, must match the download
 *
 * Pulls (once across processes and nodes, under the lock) when the image
 * is missing, corrupt, truncated or expiring, then pins it for the
 * caller: pinned images are never evicted by gc.  Records the use.
 *
 * On success *path_out (caller frees) names the image and *pin_out (may be
 * NULL for local paths) is released with vg_cache_unpin when the task has
 * finished.  On failure both are NULL and e says what failed: VG_EINVAL
 * for a malformed reference, VG_ENOENT for a missing local file,
 * VG_EPARSE for a pulled file that is not a valid SIF, VG_EDENIED for a
 * digest mismatch, VG_EBACKEND for a failed pull (with the puller's
 * stderr), VG_ETIMEOUT when another process held the pull lock longer than
 * lock_wait, VG_EIO for filesystem trouble.
 *
 * Blocks: for the pull (network), or for another process's pull.
 */
int	vg_cache_resolve(struct vg_cache *c, const char *ref,
	    double needed_until, char **path_out, struct vg_cache_pin **pin_out,
	    struct vg_err *e);

/*
 * The digest (64 lowercase hex digits) the cache's record for ref says
 * it was last pulled as, into digest; "" when there is no record or it
 * was written by a writer the site does not trust.  No pull, no lock:
 * what the last vg_cache_resolve or vg_cache_pull of ref found.
 */
void	vg_cache_ref_digest(const struct vg_cache *c, const char *ref,
	    char digest[65]);

/* Releases a pin (removes its lease file) and frees it; NULL is fine. */
void	vg_cache_unpin(struct vg_cache_pin *pin);

/*
 * Forgets a pin without removing its lease file, e.g. in a child after
 * fork, so that only the parent releases it.  NULL is fine.
 */
void	vg_cache_pin_free(struct vg_cache_pin *pin);

/* Frees c; pins taken from it stay valid and must still be released. */
void	vg_cache_close(struct vg_cache *c);

/* ---- inspection and maintenance (vigil cache ...) ---- */

/* One cached image as seen by list, verify and gc. */
struct vg_cache_entry {
	char		 digest[65];	/* lowercase hex sha256 */
	char		*path;		/* the image, owned */
	struct vg_strv	 refs;		/* references naming it */
	int		 present;	/* the image file exists */
	uint64_t	 size;		/* bytes (file, else record) */
	double		 pulled;	/* wall clock, from the record */
	double		 last_use;	/* by vigil, from the record */
	double		 atime, mtime, ctime; /* of the image; 0 */
	double		 purge_at;	/* purge moment, INFINITY */
	int		 npins;		/* live leases */
	int		 has_record;	/* entries/<digest>.rec exists */
};

struct vg_cache_list {
	struct vg_cache_entry	*v;
	size_t			 n;
	size_t			 cap;
};

/*
 * Lists every image and record (union of sha256/ and entries/), sorted by
 * digest.  Reads directories, stats images and reads small records; does
 * not read images.  *out is filled; release with vg_cache_list_release.
 */
int	vg_cache_list(struct vg_cache *c, struct vg_cache_list *out,
	    struct vg_err *e);
void	vg_cache_list_release(struct vg_cache_list *l);

/*
 * Pulls ref (as vg_cache_resolve, without pinning and with the purge
 * check against now) unless a sound, unexpiring copy is cached; force
 * pulls anyway.  *digest_out (caller frees) is the image's digest.
 * Blocks.
 */
int	vg_cache_pull(struct vg_cache *c, const char *ref, int force,
	    char **digest_out, struct vg_err *e);

/* What verify found for one entry. */
enum vg_cache_problem {
	VG_CACHE_OK = 0,
	VG_CACHE_MISSING,	/* record without image: purged or deleted */
	VG_CACHE_CORRUPT,	/* image fails the header check */
	VG_CACHE_UNRECORDED,	/* image without record */
	VG_CACHE_EXPIRING,	/* within the margin of the purge */
	VG_CACHE_TAMPERED,	/* content is not its address: never served */
	VG_CACHE_UNTRUSTED,	/* a record by an untrusted writer, or not a
				   regular file: never believed */
};

/* Called by vg_cache_verify for each entry that is not OK. */
typedef void (*vg_cache_report_fn)(void *arg,
    const struct vg_cache_entry *ent, enum vg_cache_problem what,
    const char *detail);

/*
 * Reconciles the records with the files: a missing image loses its entry
 * and reference records, a corrupt one is removed with its records, an
 * image without a record gets one, and an image within the purge margin
 * is reported as expiring.  With refresh, missing and expiring images are
 * pulled again from their recorded references instead.  Reports each
 * finding through fn (may be NULL); *nproblems counts them.  Reads every
 * image's header (bounded reads) and every reference record.  Blocks for
 * the pulls when refreshing.
 */
int	vg_cache_verify(struct vg_cache *c, int refresh,
	    vg_cache_report_fn fn, void *arg, size_t *nproblems,
	    struct vg_err *e);

/* Why gc removes an entry. */
enum vg_cache_evict_why {
	VG_EVICT_KEEP = 0,
	VG_EVICT_PURGE,		/* purged within the margin */
	VG_EVICT_QUOTA,		/* LRU beyond the quota */
	VG_EVICT_MISSING,	/* record of an image that is gone */
};

/* Called by vg_cache_gc for each entry removed (or, dry-run, to remove). */
typedef void (*vg_cache_gc_fn)(void *arg, const struct vg_cache_entry *ent,
    enum vg_cache_evict_why why);

struct vg_cache_gc_stats {
	size_t		 entries, removed, pinned;
	uint64_t	 bytes, freed;		/* before, and freed */
	int		 over_quota;	/* pinned entries exceed it */
};

/*
 * Applies the purge rule and the quota (LRU by vigil's last use, ties in
 * digest order; pinned entries are never removed); with dry_run only
 * reports.  fn sees entries in digest order; an entry it is given and
 * its path are valid during the call only; the image's clocks are filled
 * only when gc stat()ed it (near the purge age, or without a record),
 * the pull time only then and for records without images.  Also removes
 * stale pins and stale tmp/ files.
 */
int	vg_cache_gc(struct vg_cache *c, int dry_run, vg_cache_gc_fn fn,
	    void *arg, struct vg_cache_gc_stats *st, struct vg_err *e);

/*
 * Removes the image a reference or a digest (full or a unique prefix of
 * at least 8 hex digits) names, with its records.  Refuses with
 * VG_EDENIED while the image is pinned, unless force.
 */
int	vg_cache_rm(struct vg_cache *c, const char *ref_or_digest, int force,
	    struct vg_err *e);

#endif

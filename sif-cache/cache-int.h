/*
 * cache-int.h - what cache.c (resolve, pull, records, pins) shares with
 * maint.c (list, verify, rm) and gc.c (gc).  Not for use outside
 * sif-cache/.
 */
#ifndef VG_CACHE_INT_H
#define VG_CACHE_INT_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "scratch/purge.h"
#include "sif-cache/cache.h"

struct vg_cache {
	char			*dir;
	char			*d_sha, *d_refs, *d_entries;
	char			*d_pins, *d_locks, *d_tmp;
	char			*puller;	/* NULL: search PATH */
	struct vg_purge_policy	 purge;
	double			 margin;	/* 0: policy's or 1 d */
	uint64_t		 quota_bytes, quota_entries;
	double			 lease, wait;
	int			 purge_set;	/* the config names a rule */
	uid_t			*trusted;	/* cache.trusted_writers */
	size_t			 ntrusted;
	char			*d_verified;	/* the user's own records of
						   images hashed, or NULL */
	mode_t			 dmode;		/* of directories made */
	char			*warning;	/* vg_cache_purge_warning */
};

/* True when uid may write records others believe: root, vigil's user,
 * or one of cache.trusted_writers. */
int	cache_trusted(const struct vg_cache *c, uid_t uid);

/*
 * Checks that the open image fd (at path) is what its address digest
 * says: its SHA-256, hashed in full unless the user's own record says
 * this very file (device, inode, size, modification and change times)
 * was hashed before (use_record).  A record is written after a hash
 * that matched.  Returns 0, or VG_EDENIED with e naming the file, its
 * owner and mode and the digest found.
 */
int	cache_content_check(struct vg_cache *c, int fd, const char *path,
	    const char *digest, int use_record, struct vg_err *e);

struct vg_cache_pin {
	char	*path;
};

/* One line of an entries/<xx>.rec shard. */
struct cache_rec {
	char		 digest[65];
	uint64_t	 size;
	double		 pulled;
	double		 last_use;
};

struct cache_recs {
	struct cache_rec	*v;
	size_t			 n, cap;
};

/*
 * Parses one record line (NUL-terminated, no newline) "<digest> <size>
 * <pulled> <last use>": 0 with the digest in binary and the numbers
 * filled, -1 when the line is not one.
 */
/* Fills the clocks, size and purge moment of ent from st. */
void	cache_entry_stat(struct vg_cache *c, struct vg_cache_entry *ent,
	    const struct stat *st);

int	cache_rec_parse(const char *line, unsigned char digest[32],
	    uint64_t *size, double *pulled, double *last_use);

/* 64 lowercase hex digits to 32 bytes; -1 at the first non-digit. */
int	cache_digest_bin(const char *hex, unsigned char bin[32]);
/* 32 bytes to 64 lowercase hex digits and a NUL. */
void	cache_digest_hex(const unsigned char bin[32], char hex[65]);

/* Reads one shard file (appending to out); a missing one is empty. */
int	cache_recs_load(const char *path, struct cache_recs *out,
	    struct vg_err *e);
/* Reads every shard; unreadable lines are skipped. */
int	cache_recs_load_all(struct vg_cache *c, struct cache_recs *out,
	    struct vg_err *e);
void	cache_recs_release(struct cache_recs *r);

/*
 * Updates the record of digest under the shard's lock: size and pulled
 * are set when >= 0, last_use when > 0; remove deletes the line.
 */
int	cache_rec_update(struct vg_cache *c, const char *digest,
	    int64_t size, double pulled, double last_use, int remove,
	    struct vg_err *e);

/*
 * Removes the record lines of the n digests d (binary, sorted, all in
 * shard) under the shard's lock, in one rewrite.
 */
int	cache_recs_remove(struct vg_cache *c, int shard,
	    const unsigned char (*d)[32], size_t n, struct vg_err *e);

/* Whether name is 64 lowercase hex digits followed by suffix. */
int	cache_is_digest_name(const char *name, const char *suffix);

/* The path of the image of digest (caller frees). */
char	*cache_image_path(const struct vg_cache *c, const char *digest);

/* Writes len bytes to path atomically under a name unique per node. */
int	cache_write_atomic(const char *path, const char *data, size_t len,
	    struct vg_err *e);

/* Parses a pin file name; 0 when it is one. */
int	cache_pin_parse(const char *name, char digest[65], char *host,
	    size_t hostlen, long *pid, double *expiry);
/* Whether a pin (parsed) is held by a live task. */
int	cache_pin_live(const char *host, long pid, double expiry,
	    double now);

/* Called with the path of each reference record and the digest it names. */
typedef void (*cache_ref_fn)(void *arg, const char *path, const char *digest);
/* Reads every reference record (one file each) and calls fn for each. */
void	cache_refs_each(struct vg_cache *c, cache_ref_fn fn, void *arg);
/* Removes every reference record that names digest. */
void	cache_drop_refs(struct vg_cache *c, const char *digest);
/* Counts the live pins of digest right now. */
int	cache_live_pins(struct vg_cache *c, const char *digest);

/* The purge margin in effect for a need (seconds). */
double	cache_margin(const struct vg_cache *c);

#endif

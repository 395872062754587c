/*
 * reuse.h - results reused across runs (docs/reuse.md): a task's key, a
 * hash of a description a person can read (the command after
 * substitution, the task's environment, the backend and its image, the
 * isolation the task runs with, the GPUs it is given, the working
 * directory and the content of the manifest's inputs), and what a hit
 * does: bring the files of the earlier attempt's task directory into
 * the new run's, by hard link where the file system allows and a copy
 * otherwise, never following a link a task planted.
 *
 * The driver (runner/core/run.c) asks before an attempt is handed to
 * the scheduler, so that a hit is never started nor submitted on any
 * backend or scheduler, and records the entry of a successful attempt
 * in the transaction that records its end, after its files are in
 * place.  Entries live in the store (vg_store_reuse_*); this file
 * computes keys and moves files.
 */
#ifndef VG_REUSE_H
#define VG_REUSE_H

#include "backends/backend.h"
#include "common/buf.h"
#include "common/err.h"
#include "runner/core/store.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/task.h"

/* Keys are 32 hex digits (vg_hash128_hex). */
#define VG_REUSE_KEY_LEN	32

/* What is the same for every task of a run, worked out once. */
struct vg_reuse {
	struct vg_store		*st;
	struct vg_buf		 fixed;	/* the description's shared lines */
	char			 parts[VG_REUSE_KEY_LEN + 1]; /* their id */
	struct vg_buf		 desc;	/* the last task's own lines */
	struct vg_buf		 full;	/* its whole description */
	struct vg_reuse_rec	 rec;	/* the last entry found */
	long long		 hashed; /* input files hashed (not from the
					    stat cache) */
};

/*
 * Works out the lines every task of m shares: backend (ops, may be NULL)
 * with its image (vg_backend_image_id) and confinement, isolation,
 * workdir, and each input file with its size and content hash, read
 * from the stat cache of st while the file's device, inode, size and
 * mtime are unchanged, else hashed and recorded; records the shared
 * lines once under their id (r->parts).  Blocks on reading the inputs.  Release with vg_reuse_release (also after a failure).
 */
int	vg_reuse_init(struct vg_reuse *r, struct vg_store *st,
	    const struct vg_manifest *m, const struct vg_backend_ops *ops,
	    struct vg_err *e);
void	vg_reuse_release(struct vg_reuse *r);

/* Describes task t (its own lines into r->desc, the whole into r->full,
 * the shared lines being r->parts) and writes its key (VG_REUSE_KEY_LEN
 * hex digits and a NUL) into key.  Pure but for r's buffers. */
void	vg_reuse_key(struct vg_reuse *r, const struct vg_task *t,
	    char key[VG_REUSE_KEY_LEN + 1]);

/*
 * Looks key up: *hit 1 with r->rec the entry when one exists and every
 * file it recorded is still in its task directory as a regular file of
 * this user with the recorded size; 0 otherwise (a hit whose files are
 * gone is a miss).
 */
int	vg_reuse_find(struct vg_reuse *r, const char *key, int *hit,
	    struct vg_err *e);

/*
 * Brings the files of entry rec into the task directory dst (made by
 * the caller): each by link(2) from the entry's directory, a copy where
 * linking fails (another file system, no hard links), every component
 * opened beneath its directory without following a link (common/
 * beneath.h), and checked again once in place.  On failure removes what
 * it brought and returns a negative vg_rc (the task then runs).
 */
int	vg_reuse_bring(const struct vg_reuse_rec *rec, const char *dst,
	    struct vg_err *e);

/* Appends "REL SIZE\n" for every regular file under dir (none when dir
 * does not exist), in a stable order; links and other kinds are left
 * out.  For the entry of a successful attempt. */
int	vg_reuse_files(const char *dir, struct vg_buf *out, struct vg_err *e);

#endif

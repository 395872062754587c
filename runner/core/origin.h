/*
 * origin.h - where a run was made: its working directory (the directory
 * vigil was started in, absolute, with the identity of the directory it
 * named then) and the part of the caller's environment its tasks see
 * (backends/task-env.c: PATH, HOME, USER, LOGNAME, TMPDIR, LANG,
 * LC_ALL, TZ).  Recorded with the run (the runs table and
 * RUN_DIR/origin.json) and entered again by every later vigil that
 * starts its tasks (resume, retry, task-exec), so that they run as the
 * first attempt did whatever the current directory.  Nothing else of the
 * environment is kept: what a webhook header reads is read at delivery.
 */
#ifndef VG_ORIGIN_H
#define VG_ORIGIN_H

#include "common/buf.h"
#include "common/err.h"

/* The largest origin.json read back (a PATH is at most a few KiB). */
#define VG_ORIGIN_MAX	(64 * 1024)

struct vg_origin {
	char			*workdir;	/* absolute */
	unsigned long long	 dev, ino;	/* of workdir when recorded */
	struct vg_strv		 env;		/* "NAME=VALUE", set ones */
};

#define VG_ORIGIN_INIT	{ NULL, 0, 0, VG_STRV_INIT }

/* Frees the contents of o; the struct is the caller's. */
void	vg_origin_release(struct vg_origin *o);

/*
 * Fills o (released by the caller) from this process: the current
 * directory and the recorded variables that are set.  Returns 0, or
 * VG_EIO when the current directory cannot be named.
 */
int	vg_origin_capture(struct vg_origin *o, struct vg_err *e);

/* Appends o as a JSON object to out. */
void	vg_origin_to_json(const struct vg_origin *o, struct vg_buf *out);

/*
 * Parses JSON text (len bytes) written by vg_origin_to_json into o
 * (released by the caller).  Returns 0 or VG_EPARSE.
 */
int	vg_origin_from_json(const char *text, size_t len, struct vg_origin *o,
	    struct vg_err *e);

/*
 * Makes o this process's: changes to o->workdir and sets the recorded
 * variables (unsetting those recorded as unset).  The directory must be
 * the one recorded (same device and inode); one made again under the
 * same name is entered only when no one else can change it or its way
 * (common/adopt.h).  run_id names the run in errors.  Returns 0, or
 * VG_ENOENT when the directory no longer exists, VG_EDENIED when it was
 * replaced by one vigil does not trust, VG_EIO otherwise; on error
 * nothing has changed.
 */
int	vg_origin_enter(const struct vg_origin *o, const char *run_id,
	    struct vg_err *e);

/*
 * vg_origin_from_json then vg_origin_enter for a stored origin; NULL or
 * empty text (a run made before origins were recorded) enters nothing
 * and returns 0.
 */
int	vg_origin_enter_json(const char *text, size_t len, const char *run_id,
	    struct vg_err *e);

/* The working directory named in stored origin text, or NULL (caller
 * frees). */
char	*vg_origin_workdir(const char *text);

#endif

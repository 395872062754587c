/*
 * sandbox-workdir.h - the working directory of a run, writable at
 * `standard` with its protected entries kept read-only.
 *
 * Results land where the user works: a task may write its run's working
 * directory, as in the agent sandboxes users know.  What in it runs code
 * later, outside any sandbox (version control metadata, shell and ssh
 * start-up files, direnv's .envrc), stays read-only: each such entry
 * present when the run's sandbox is compiled is bound read-only over
 * itself in the task's mount namespace (a mount point can be neither
 * written, renamed nor removed), and one a task makes where there was
 * none is moved aside when its attempt ends.  No write grant at all
 * when the directory is `/`, a system tree, /tmp or a home directory
 * itself, when a protected entry is a symbolic link (it cannot be held
 * in place) or when there is no mount namespace to bind in.
 * docs/isolation.md, "The working directory".
 */
#ifndef VG_SANDBOX_WORKDIR_H
#define VG_SANDBOX_WORKDIR_H

#include <sys/types.h>

#include "common/buf.h"

#define VG_WD_MAX_PROTECT	24

struct vg_wd_entry {
	const char	*name;		/* a static string */
	dev_t		 dev;
	ino_t		 ino;
};

struct vg_wd {
	char			*path;		/* absolute */
	int			 fd;		/* O_PATH, -1 */
	dev_t			 dev;
	ino_t			 ino;
	int			 grant;		/* tasks may write it */
	struct vg_wd_entry	 prot[VG_WD_MAX_PROTECT];	/* present */
	int			 nprot;
	unsigned		 absent;	/* bit i: protected name i
						   was absent */
	char			*why;		/* no grant: why, and what to
						   do (NULL when granted or not
						   asked) */
};

/* The names kept read-only beneath a writable working directory,
 * NULL-terminated. */
extern const char *const vg_wd_protected[];

/*
 * Why path (absolute, resolved) gets no write grant: "'/home/a' is a
 * home directory" and so on, in a static buffer; NULL when it may.
 */
const char *vg_wd_refused(const char *path);

/* An empty one (no directory, no descriptor): what a sandbox holds until
 * vg_wd_prepare, and what vg_wd_release leaves. */
void	vg_wd_init(struct vg_wd *w);

/*
 * Prepares w for the working directory dir (NULL: none) when
 * tasks are to write it (write) and a mount namespace will hold the
 * protected entries (mntns).  Never fails: what stands in the way of a
 * grant is w->why.  Also used with write 0 to learn the path (strict
 * reads it).
 */
void	vg_wd_prepare(struct vg_wd *w, const char *dir, int write, int mntns);
void	vg_wd_release(struct vg_wd *w);

/*
 * In the child of clone, in its new mount namespace, before vigil-shim
 * runs: binds each protected entry read-only over itself, found again
 * beneath the working directory without following a link and checked
 * to be the one prepared.  Returns 0, or -errno with *stage naming the
 * step (a replaced entry: -EXDEV).  Async-signal-safe.
 */
int	vg_wd_protect(const struct vg_wd *w, const char **stage);

/*
 * After an attempt: moves aside every protected name a task made where
 * there was none ("NAME" -> "NAME.vigil-moved.TAG"), never following a
 * link, and appends what it moved to note ("moved aside '.git' ...").
 * Returns how many it moved.
 */
int	vg_wd_sweep(const struct vg_wd *w, const char *tag,
	    struct vg_buf *note);

#endif

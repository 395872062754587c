/*
 * dirpool.h - empty directories kept for reuse under one parent.
 *
 * A run makes a directory per task (its task directory, its scratch
 * directory) and removes it when the task left nothing in it.  On ext4 a
 * mkdir and rmdir pair costs about ten times a pair of renames (about
 * 99 and 8 microseconds here: bench/dirpool.c), since a rename allocates
 * and frees no inode and no directory block.  So an ended task's empty
 * directory is renamed into a pool and the next task's is renamed out of
 * it.  A pooled directory is named "<prefix><pid>.d<N>" in the pool's
 * parent; a dead process's are removed by the next pool opened there.
 */
#ifndef VG_DIRPOOL_H
#define VG_DIRPOOL_H

#include <stddef.h>
#include <sys/types.h>

struct vg_dirpool {
	int	  fd;		/* the pool's parent, or -1: no pool */
	pid_t	  pid;		/* the process the pool belongs to */
	char	  prefix[96];
	unsigned *v;		/* numbers N of the pooled directories */
	size_t	  n, cap;
	unsigned  next;		/* the number of the next one put */
	const char *const *keep; /* vg_dirpool_keep's names, or NULL */
};

#define VG_DIRPOOL_INIT	{ .fd = -1 }

/*
 * Opens a pool under parent (a directory fd, duplicated: the caller
 * keeps its own) with names starting with prefix (at most 90 bytes, no
 * '/'); pooled directories a dead process of this host left there are
 * removed.  Returns 0, or -1 with errno (no pool: the calls below then
 * make and remove directories as mkdirat and unlinkat do).
 */
int	vg_dirpool_open(struct vg_dirpool *p, int parent, const char *prefix);

/*
 * Lets a pooled directory hold the files names (NULL-terminated, kept
 * by the caller) when each is an empty regular file of ours, mode 0600:
 * they go into the pool with it and come out with it, so that a task
 * directory's empty stdout and stderr are not made and removed per task.
 * Where a directory is not pooled they are removed (vg_dirpool_rmdirat),
 * so that an empty one is never left behind.
 */
void	vg_dirpool_keep(struct vg_dirpool *p, const char *const *names);

/*
 * Like mkdirat(dfd, name, 0700): a pooled directory renamed to name when
 * there is one (never over an existing name), else a new one.  Returns 0,
 * or -1 with errno (EEXIST when name exists).
 */
int	vg_dirpool_mkdirat(struct vg_dirpool *p, int dfd, const char *name);

/*
 * Like unlinkat(dfd, name, AT_REMOVEDIR): an empty directory of ours
 * with mode 0700 (but for the kept files) is renamed into the pool, any
 * other removed.  Returns 0, or -1 with errno (ENOTEMPTY when something
 * else is in it; its empty kept files are removed then).
 */
int	vg_dirpool_rmdirat(struct vg_dirpool *p, int dfd, const char *name);

/*
 * Renames name under dfd into the pool, for a caller that has just
 * emptied it and seen it is a directory of ours with mode 0700 (no second
 * look).  Returns 0, or -1 with errno when there is no pool or the
 * rename fails (name is left where it is).
 */
int	vg_dirpool_put(struct vg_dirpool *p, int dfd, const char *name);

/*
 * Removes the entries of directory dirfd named "<prefix><pid>.<kind><n>"
 * whose process is gone from this host (unlinkat with flags): what a
 * killed vigil left in a pool, this one's (kind 'd', AT_REMOVEDIR, with
 * the regular files in them) or the local backend's of empty output
 * files (kind 'o').
 */
void	vg_pool_sweep(int dirfd, const char *prefix, char kind, int flags);

/* The number of directories in the pool. */
size_t	vg_dirpool_count(const struct vg_dirpool *p);

/* Removes the pooled directories and closes the pool (safe to call on
 * a pool never opened, or twice; a fork's copy is released, its
 * directories left to the pool's owner). */
void	vg_dirpool_close(struct vg_dirpool *p);

#endif

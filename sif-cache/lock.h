/*
 * lock.h - a lock file that works across processes and nodes on NFS and
 * Lustre, where flock() and fcntl() locks are unreliable.
 *
 * Acquiring writes a unique file naming this host and pid, then link()s it
 * to the lock name: link is atomic on every POSIX filesystem including
 * NFS, and a lost reply is recognised by the unique file's link count
 * (the classic NFS recipe, open(2) "O_EXCL").  The holder refreshes a
 * lease by touching the lock file; a waiter that sees the file unchanged
 * for a whole lease, measured on its own monotonic clock (so clocks of
 * other nodes do not matter), takes it over.  On the holder's own host a
 * dead pid is recognised at once.
 *
 * The lock only avoids duplicate work: callers must stay correct if two
 * holders ever overlap (a takeover racing a refresh).  The cache is,
 * since it writes to unique temporary names and renames.
 */
#ifndef VG_LOCK_H
#define VG_LOCK_H

#include <sys/types.h>

#include "common/err.h"

struct vg_lock;

/* Who holds a lock, as read from its file. */
struct vg_lock_owner {
	char	host[256];
	long	pid;
	double	acquired;	/* wall clock */
};

/*
 * Acquires the lock file at path (its directory must exist), waiting at
 * most wait seconds (0: one try).  lease is how long the lock lives
 * without vg_lock_refresh.  On success *out is owned by the caller
 * (vg_lock_release).  VG_ETIMEOUT names the holder when the wait ran out;
 * VG_EIO for filesystem errors.  Blocks, sleeping between polls.
 */
int	vg_lock_acquire(const char *path, double lease, double wait,
	    struct vg_lock **out, struct vg_err *e);

/*
 * Renews the lease if a quarter of it has passed since the last renewal;
 * cheap enough to call from every progress callback.  Returns VG_EAGAIN
 * when the lock was taken over by another process (the caller may finish
 * its work: see above), 0 otherwise.
 */
int	vg_lock_refresh(struct vg_lock *l);

/* Removes the lock file if still ours, and frees l; NULL is fine. */
void	vg_lock_release(struct vg_lock *l);

/* Reads the holder of the lock file at path; VG_ENOENT when free. */
int	vg_lock_owner(const char *path, struct vg_lock_owner *o,
	    struct vg_err *e);

/*
 * Whether a process named by host and pid is known dead: only decidable
 * on the same host (kill(pid, 0) gives ESRCH).
 */
int	vg_lock_owner_dead(const char *host, long pid);

/* This host's name (gethostname), static storage. */
const char *vg_lock_hostname(void);

/*
 * Locks held by a user trusted(arg, uid) refuses are stale at once (a
 * cache's trusted writers: a lock another group member keeps fresh
 * would stall every pull for the whole wait).  NULL trusts anyone.
 */
void	vg_lock_trust(int (*trusted)(const void *, uid_t), const void *arg);

#endif

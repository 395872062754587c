/*
 * beneath.h - acting under a directory someone else can write, without
 * being led out of it.  vigil runs with more privilege than its tasks;
 * a task can write its task, scratch, session and temp directories, and
 * can replace any file or directory there with a symbolic link, a FIFO
 * or a hard link between two of vigil's looks.  Code that opens, makes,
 * renames or removes anything under such a directory does it here:
 * relative to a directory descriptor (the anchor, a directory the task
 * cannot replace), with openat2(2) RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_MAGICLINKS (a component-by-component O_NOFOLLOW walk
 * where openat2 is missing), never through a path string resolved again
 * later.  Files are regular files of vigil's own, checked after the open
 * (fstat: type, owner, link count), and opened O_NONBLOCK so a FIFO
 * cannot hang vigil.  docs/isolation.md, "Paths vigil acts on", lists
 * the callers.
 */
#ifndef VG_BENEATH_H
#define VG_BENEATH_H

#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"

/*
 * Like openat(dirfd, rel, flags, mode), but no component of rel may be
 * a symbolic link (or a /proc magic link), "..", or absolute: such a
 * path fails with ELOOP (a link) or EXDEV (leaving dirfd).  O_CLOEXEC
 * and O_NOFOLLOW are always added.  Returns the descriptor, or -1 with
 * errno set.  Does not block on a FIFO only when flags has O_NONBLOCK.
 */
int	vg_beneath_open(int dirfd, const char *rel, int flags, mode_t mode);

/*
 * Opens (flags: O_RDONLY, or O_WRONLY with O_APPEND, O_CREAT, O_TRUNC
 * as wanted) the regular file rel beneath dirfd for vigil's own use:
 * refused, with e naming what (e.g. "task directory '/x'") and rel,
 * when a component is a link, when it is not a regular file (a FIFO, a
 * device, a directory), when it has other hard links, or when its
 * owner is not vigil's effective user.  The descriptor is blocking
 * again on return.  Returns it, or a negative vg_rc (VG_ENOENT when it
 * does not exist and flags has no O_CREAT).
 */
int	vg_beneath_file(int dirfd, const char *rel, int flags, mode_t mode,
	    const char *what, struct vg_err *e);

/*
 * The checks of vg_beneath_file on a file already open (O_NONBLOCK):
 * a regular file, one name, owned by vigil's effective user; clears
 * O_NONBLOCK.  what names the file in refusals ("audit log '/x'").
 * Returns 0 or a negative vg_rc.
 */
int	vg_beneath_own(int fd, const char *what, struct vg_err *e);

/*
 * Makes the directories of rel beneath dirfd (mode, existing ones
 * fine, links refused) and returns a descriptor of the last one
 * (O_DIRECTORY), or a negative vg_rc with e naming what and rel.
 */
int	vg_beneath_mkdirs(int dirfd, const char *rel, mode_t mode,
	    const char *what, struct vg_err *e);

/*
 * Replaces the file name in the directory dirfd with len bytes of data,
 * atomically: a temporary made there with O_EXCL (whatever a task left
 * at its name is removed first, never followed), written, renamed over
 * name (a link at name is replaced, not followed).  Returns 0 or a
 * negative vg_rc.
 */
int	vg_beneath_replace(int dirfd, const char *name, const void *data,
	    size_t len, mode_t mode, const char *what, struct vg_err *e);

/*
 * Opens name in the directory dir, of which the last up components
 * (0: none) are in directories others can write (a session's
 * cmds/JOB): the walk starts at the directory above them, as
 * vg_beneath_anchor opens it, and goes on as vg_beneath_file, whose
 * checks apply.  Without O_CREAT, VG_ENOENT when it does not exist.
 * Returns the descriptor or a negative vg_rc.
 */
int	vg_beneath_file_in(const char *dir, int up, const char *name,
	    int flags, mode_t mode, struct vg_err *e);

/*
 * Opens the file path names: its last component in its directory, as
 * vg_beneath_file_in(DIR, 0, NAME, ...) does.  A path without '/' is
 * VG_EINVAL.  Returns the descriptor or a negative vg_rc.
 */
int	vg_beneath_file_path(const char *path, int flags, mode_t mode,
	    struct vg_err *e);

/* Opens the directory dir itself (O_DIRECTORY), up as for
 * vg_beneath_file_in: its last up components are walked without
 * following a link.  Returns the descriptor or a negative vg_rc. */
int	vg_beneath_dir_in(const char *dir, int up, struct vg_err *e);

/*
 * Reads the whole file name of dir (up as for vg_beneath_file_in) into
 * out, appending, as vg_read_file does: a link, a FIFO or a file with
 * other hard links a task planted is refused, never read.  VG_ENOENT
 * when it does not exist, VG_ELIMIT past max bytes.
 */
int	vg_beneath_read(const char *dir, int up, const char *name,
	    size_t max, struct vg_buf *out, struct vg_err *e);

/*
 * Opens the directory path vigil made and trusts (a run or task
 * directory's path as vigil recorded it) as an anchor: O_DIRECTORY,
 * its last component not followed.  Returns the descriptor or a
 * negative vg_rc with e naming it.
 */
int	vg_beneath_anchor(const char *path, struct vg_err *e);

/*
 * Checks the open file fd: owned by uid, and none of the mode bits in
 * forbidden set (e.g. 022: writable by group or others).  Refusals name
 * what, the owner and mode found and what vigil expects.  Returns 0 or
 * VG_EDENIED.
 */
int	vg_beneath_check(int fd, uid_t uid, mode_t forbidden,
	    const char *what, struct vg_err *e);

/*
 * Reads up to max bytes of the regular file path, appending to out, for
 * files others may write (a shared cache's records and locks): the last
 * component is not followed, a FIFO cannot hang vigil (O_NONBLOCK), and
 * anything but a regular file is refused (VG_EDENIED, e naming what and
 * path).  *st (may be NULL) gets the file's status, for owner checks.
 * VG_ENOENT when it does not exist.  Returns 0 or a negative vg_rc.
 */
struct stat;
int	vg_read_regular(const char *path, size_t max, struct vg_buf *out,
	    struct stat *st, const char *what, struct vg_err *e);

/* For tests: 1 makes vg_beneath_open walk without openat2, as on a
 * kernel older than 5.6. */
void	vg_beneath_force_walk(int on);

#endif

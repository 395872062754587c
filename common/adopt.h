/*
 * adopt.h - opening a directory vigil keeps for the user (its home, the
 * database's directory, the audit log's directory, a scratch base) only
 * when no one else can change it.  On a login node shared by many
 * users, a directory another user made first (VIGIL_HOME in /tmp, a
 * scratch base, a planted link on the way) would otherwise be adopted:
 * she could plant the database, swap a file vigil writes, or point a
 * removal elsewhere.  Rules (docs/isolation.md, "Shared hosts"):
 *
 *  - the path is made canonical once (realpath of what exists), then
 *    walked from / one component at a time, O_NOFOLLOW, each opened
 *    relative to the one before; the string is never resolved again;
 *  - every directory on the way is owned by root or by vigil's
 *    effective user, and one that others may write (group or other
 *    write bit, but for the user's own private group) is sticky, like
 *    /tmp, so no one else can rename or replace what is in it;
 *  - the directory itself is owned by the effective user and writable
 *    by no one else (VG_ADOPT_SHARED: a shared base, which root or the
 *    user owns and which is sticky when others may write it);
 *  - what is missing is made (VG_ADOPT_CREATE) with mode exactly,
 *    whatever the umask.
 *
 * Root is not exempt: root's vigil (cron on an agent host) refuses a
 * directory an ordinary user owns.  Refusals name the path, the owner
 * (name and uid), the mode, and what vigil expects.
 */
#ifndef VG_ADOPT_H
#define VG_ADOPT_H

#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"

#define VG_ADOPT_CREATE	0x1	/* make missing directories (mode) */
#define VG_ADOPT_SHARED	0x2	/* the directory is a base shared by users */

/*
 * Opens the directory path (absolute, or relative to the working
 * directory) under the rules above; what names it in refusals
 * ("VIGIL_HOME", "scratch.path").  Returns an O_RDONLY | O_DIRECTORY
 * descriptor, or a negative vg_rc: VG_EDENIED for a refusal, VG_ENOENT
 * when it is missing without VG_ADOPT_CREATE, VG_EIO otherwise.
 */
int	vg_adopt_dir(const char *path, mode_t mode, unsigned flags,
	    const char *what, struct vg_err *e);

/* Appends "NAME (uid N)" (or "uid N" when the uid has no name). */
void	vg_owner_desc(uid_t uid, struct vg_buf *out);

#endif

/*
 * fs.h - what kind of file system a path is on: shared ones (NFS, Lustre,
 * GPFS, BeeGFS, CephFS, ...) are seen by every node that mounts them.
 */
#ifndef VG_FS_H
#define VG_FS_H

#include <stddef.h>

/*
 * Names the file system of path, or of its nearest existing parent, in
 * name (size bytes: "nfs", "ext4", or "0x..." for an unknown f_type) and
 * sets *shared.  Returns 1 for a known kind, 0 for an unknown one (not
 * shared), -1 with errno when statfs(2) fails.
 */
int	vg_fs_kind(const char *path, char *name, size_t size, int *shared);

#endif

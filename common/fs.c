/*
 * fs.c - what kind of file system a path is on (common/fs.h), by
 * statfs(2)'s f_type: whether other nodes of a cluster see it too.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include "common/fs.h"

/* File systems by statfs(2) f_type; shared ones are seen by every node
 * that mounts them (network and cluster file systems). */
static const struct fs_kind {
	unsigned long	 magic;
	const char	*name;
	int		 shared;
} fs_kinds[] = {
	{ .magic = 0x6969, .name = "nfs", .shared = 1 },
	{ .magic = 0x0bd00bd0, .name = "lustre", .shared = 1 },
	{ .magic = 0x47504653, .name = "gpfs", .shared = 1 },
	{ .magic = 0x19830326, .name = "beegfs", .shared = 1 },
	{ .magic = 0x00c36400, .name = "cephfs", .shared = 1 },
	{ .magic = 0xaad7aaea, .name = "panfs", .shared = 1 },
	{ .magic = 0x20030528, .name = "orangefs", .shared = 1 },
	{ .magic = 0x5346414f, .name = "afs", .shared = 1 },
	{ .magic = 0x6b414653, .name = "afs", .shared = 1 },
	{ .magic = 0x7461636f, .name = "ocfs2", .shared = 1 },
	{ .magic = 0x01161970, .name = "gfs2", .shared = 1 },
	{ .magic = 0xff534d42, .name = "cifs", .shared = 1 },
	{ .magic = 0xfe534d42, .name = "smb2", .shared = 1 },
	{ .magic = 0x01021997, .name = "9p", .shared = 1 },
	{ .magic = 0xef53, .name = "ext4", .shared = 0 },
	{ .magic = 0x58465342, .name = "xfs", .shared = 0 },
	{ .magic = 0x9123683e, .name = "btrfs", .shared = 0 },
	{ .magic = 0x2fc12fc1, .name = "zfs", .shared = 0 },
	{ .magic = 0x01021994, .name = "tmpfs", .shared = 0 },
	{ .magic = 0x858458f6, .name = "ramfs", .shared = 0 },
	{ .magic = 0x794c7630, .name = "overlay", .shared = 0 },
	{ .magic = 0x73717368, .name = "squashfs", .shared = 0 },
	{ .magic = 0xf2f52010, .name = "f2fs", .shared = 0 },
	{ .magic = 0x4d44, .name = "vfat", .shared = 0 },
	{ .magic = 0x65735546, .name = "fuse", .shared = 0 },
};

int
vg_fs_kind(const char *path, char *name, size_t size, int *shared)
{
	char dir[PATH_MAX], *slash;
	struct statfs sf;
	size_t i;
	int rc;

	snprintf(dir, sizeof(dir), "%s", path);
	/* A path may not exist yet: its parent decides where it goes. */
	while ((rc = statfs(dir, &sf)) != 0 && errno == ENOENT &&
	    (slash = strrchr(dir, '/')) != NULL && slash != dir)
		*slash = '\0';
	if (rc != 0 && errno == ENOENT && strcmp(dir, path) != 0)
		rc = statfs("/", &sf);
	if (rc != 0)
		return -1;
	*shared = 0;
	snprintf(name, size, "0x%lx", (unsigned long)sf.f_type);
	for (i = 0; i < sizeof(fs_kinds) / sizeof(fs_kinds[0]); i++)
		if (fs_kinds[i].magic == (unsigned long)sf.f_type) {
			snprintf(name, size, "%s", fs_kinds[i].name);
			*shared = fs_kinds[i].shared;
			return 1;
		}
	return 0;
}

/*
 * classify-disk.c - the classifier's handlers for disks and
 * filesystems: the partitioning, formatting, volume and firmware tools
 * (which of their verbs only read), disk imagers, mount and swap.
 */
#include <string.h>

#include "runner/policy/paths.h"
#include "runner/policy/classify-int.h"

/* ---- disks and filesystems ---- */

static int
any_device(struct pl_an *an, const struct pl_cmd *c, int from, int unknown)
{
	int dd = 0, i;

	for (i = from; (i = pl_next_operand(c, i, NULL, &dd)) < c->argc; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls == PC_DEVICE)
			return 1;
		if (unknown && (p.attr & PA_UNRESOLVED))
			return 1;
		if (p.cls == PC_PROTECTED && (p.attr & (PA_ROOT | PA_SYSBIN)))
			return 1;
	}
	return 0;
}

/* True when any argument starts with one of the prefixes in list. */
int
pl_has_prefix(const struct pl_cmd *c, const char *const *list)
{
	int i, k;

	for (i = 1; i < c->argc; i++)
		for (k = 0; list[k] != NULL; k++)
			if (strncmp(c->argv[i].s, list[k], strlen(list[k])) == 0)
				return 1;
	return 0;
}

/* The operand words of parted after the device: a script of commands,
 * read-only when every command only prints. */
static int
parted_reads(const struct pl_cmd *c)
{
	static const char *const looks[] = { "print", "p", "unit", "help",
	    "version", "align-check", "quit", "list", "free", "B", "s", "MiB",
	    "GiB", "MB", "GB", "kB", "KiB", "TB", "TiB", "%", "cyl", "chs",
	    "compact", "minimal", "optimal", "min", "opt", "all", NULL };
	int i, dev = 0, ops = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_is_opt(f) || (f->s[0] >= '0' && f->s[0] <= '9'))
			continue;
		if (!dev && f->s[0] == '/') {
			dev = 1;
			continue;
		}
		ops++;
		if (!pl_eq_any(f, looks))
			return 0;
	}
	return ops > 0;
}

/* True when w is an abbreviation btrfs accepts for full (a prefix of at
 * least two letters; btrfs takes any unambiguous one). */
static int
btrfs_abbrev(const struct pl_field *w, const char *full)
{
	return w->len >= 2 && w->len <= strlen(full) &&
	    strncmp(w->s, full, w->len) == 0;
}

/* The index of btrfs's command group (the first operand, c->argc when
 * none) and in *verb the index of its verb (the next operand). */
static int
btrfs_words(const struct pl_cmd *c, int *verb)
{
	int i, j;

	for (i = 1; i < c->argc && pl_is_opt(&c->argv[i]); i++)
		;
	for (j = i + 1; j < c->argc && pl_is_opt(&c->argv[j]); j++)
		;
	*verb = j < c->argc ? j : c->argc;
	return i;
}

static const struct btrfs_ro {
	const char		*group;
	const char *const	*verbs;	/* NULL: every verb */
} btrfs_ro[] = {
	{ "subvolume", (const char *const[]){ "list", "show",
	  "get-default", "find-new", NULL } },
	{ "filesystem", (const char *const[]){ "df", "show", "usage",
	  "du", NULL } },
	{ "device", (const char *const[]){ "stats", "usage", "ready",
	  NULL } },
	{ "qgroup", (const char *const[]){ "show", NULL } },
	{ "scrub", (const char *const[]){ "status", NULL } },
	{ "balance", (const char *const[]){ "status", NULL } },
	{ "replace", (const char *const[]){ "status", NULL } },
	{ "property", (const char *const[]){ "get", "list", NULL } },
	{ "inspect-internal", NULL },
};

/* btrfs's read-only forms: listing and showing subvolumes, file
 * systems, devices, quota groups and properties, the status of scrub,
 * balance and replace, inspect-internal dumps, check without a repair
 * option, help and version. */
static int
btrfs_reads(struct pl_cmd *c)
{
	static const char *const repair[] = { "--repair", "--init-csum-tree",
	    "--init-extent-tree", "--clear-space-cache", "-z", "--reset",
	    NULL };
	const struct pl_field *g = NULL, *v = NULL;
	size_t k;
	int i, j;

	i = btrfs_words(c, &j);
	if (i == c->argc || pl_has_arg(c, "--help") ||
	    pl_has_arg(c, "--version"))
		return 1;
	g = &c->argv[i];
	if (pl_eq(g, "help") || pl_eq(g, "version"))
		return 1;
	if (pl_has_any(c, repair))
		return 0;
	if (btrfs_abbrev(g, "check"))
		return 1;
	v = j < c->argc ? &c->argv[j] : NULL;
	for (k = 0; k < sizeof(btrfs_ro) / sizeof(btrfs_ro[0]); k++) {
		if (!btrfs_abbrev(g, btrfs_ro[k].group))
			continue;
		if (btrfs_ro[k].verbs == NULL)
			return 1;
		if (v == NULL)
			return 1;	/* the group's usage */
		for (j = 0; btrfs_ro[k].verbs[j] != NULL; j++)
			if (btrfs_abbrev(v, btrfs_ro[k].verbs[j]))
				return 1;
		return 0;
	}
	return 0;
}

/* Tools that only inspect: the disk table's read-only forms. */
static int
disk_reads(struct pl_cmd *c)
{
	static const char *const sgdisk_ro[] = { "-p", "--print", "-i",
	    "--info", "-v", "--verify", "-L", "--list-types", "-O",
	    "--print-mbr", "-b", "--backup", "-P", "--pretend", NULL };
	static const char *const sfdisk_ro[] = { "-l", "--list", "-d",
	    "--dump", "-s", "--show-size", "-V", "--verify", "-J", "--json",
	    "-g", "--show-geometry", "-F", "--list-free", "-r", "--raw",
	    "-n", "--no-act", "-T", "--list-types", NULL };
	const char *n = c->name;

	if (pl_has_arg(c, "--help") || pl_has_arg(c, "--version") ||
	    (c->argc == 2 && (pl_eq(&c->argv[1], "-h") ||
	    pl_eq(&c->argv[1], "-V"))))
		return 1;
	if (strcmp(n, "fdisk") == 0 || strcmp(n, "cfdisk") == 0)
		return pl_has_opt(c, 'l', "--list") || pl_has_arg(c, "-x") ||
		    pl_has_arg(c, "--list-details");
	if (strcmp(n, "sfdisk") == 0)
		return pl_has_any(c, sfdisk_ro);
	if (strcmp(n, "gdisk") == 0)
		return pl_has_opt(c, 'l', NULL);
	if (strcmp(n, "sgdisk") == 0) {
		int i;

		if (pl_has_arg(c, "-P") || pl_has_arg(c, "--pretend"))
			return 1;
		for (i = 1; i < c->argc; i++)
			if (pl_is_opt(&c->argv[i]) && !pl_eq_any(&c->argv[i],
			    sgdisk_ro))
				return 0;
		return 1;
	}
	if (strcmp(n, "parted") == 0)
		return pl_has_opt(c, 'l', "--list") || parted_reads(c);
	if (strcmp(n, "wipefs") == 0)
		return !pl_has_opt(c, 'a', "--all") &&
		    !pl_has_opt(c, 'o', "--offset") &&
		    !pl_has_arg(c, "--types") && !pl_has_arg(c, "-t");
	if (strcmp(n, "hdparm") == 0)
		return !pl_has_arg(c, "--security-erase") &&
		    !pl_has_arg(c, "--security-erase-enhanced") &&
		    !pl_has_arg(c, "--trim-sector-ranges") &&
		    !pl_has_arg(c, "--write-sector") && !pl_has_arg(c, "-z") &&
		    !pl_has_arg(c, "--security-set-pass") &&
		    !pl_has_arg(c, "--dco-restore");
	if (strcmp(n, "badblocks") == 0)
		return !pl_has_opt(c, 'w', NULL) && !pl_has_opt(c, 'n', NULL);
	if (strcmp(n, "losetup") == 0)
		return c->argc == 1 || pl_has_opt(c, 'a', "--all") ||
		    pl_has_opt(c, 'l', "--list") || pl_has_arg(c, "-f");
	if (strcmp(n, "mdadm") == 0)
		return pl_has_opt(c, 'D', "--detail") ||
		    pl_has_opt(c, 'E', "--examine") ||
		    pl_has_arg(c, "--query") || pl_has_arg(c, "-Q") ||
		    pl_has_arg(c, "--detail-platform") ||
		    pl_has_arg(c, "--monitor");
	if (strcmp(n, "cryptsetup") == 0)
		return c->argc > 1 && (pl_has_arg(c, "status") ||
		    pl_has_arg(c, "luksDump") || pl_has_arg(c, "isLuks") ||
		    pl_has_arg(c, "benchmark") || pl_has_arg(c, "luksUUID"));
	if (strcmp(n, "btrfs") == 0)
		return btrfs_reads(c);
	if (strcmp(n, "zpool") == 0 && c->argc >= 2 &&
	    pl_eq(&c->argv[1], "import") && pl_word_count(c) == 1 &&
	    !pl_has_opt(c, 'a', NULL))
		return 1;	/* lists the pools it could import */
	if (strcmp(n, "debugfs") == 0)	/* read-only unless -w */
		return !pl_has_opt(c, 'w', NULL);
	if (strcmp(n, "zpool") == 0 || strcmp(n, "zfs") == 0)
		return c->argc < 2 || pl_eq(&c->argv[1], "list") ||
		    pl_eq(&c->argv[1], "status") || pl_eq(&c->argv[1], "get") ||
		    pl_eq(&c->argv[1], "iostat") ||
		    pl_eq(&c->argv[1], "history") ||
		    pl_eq(&c->argv[1], "events");
	if (strcmp(n, "dmsetup") == 0)
		return c->argc < 2 || pl_eq(&c->argv[1], "ls") ||
		    pl_eq(&c->argv[1], "info") ||
		    pl_eq(&c->argv[1], "status") ||
		    pl_eq(&c->argv[1], "table") || pl_eq(&c->argv[1], "deps");
	if (strcmp(n, "nvme") == 0)
		return c->argc < 2 || !(pl_eq(&c->argv[1], "format") ||
		    pl_eq(&c->argv[1], "sanitize") ||
		    pl_eq(&c->argv[1], "write-zeroes") ||
		    pl_eq(&c->argv[1], "write") ||
		    pl_eq(&c->argv[1], "fw-download") ||
		    pl_eq(&c->argv[1], "fw-commit") ||
		    pl_eq(&c->argv[1], "delete-ns") ||
		    pl_eq(&c->argv[1], "create-ns"));
	if (strcmp(n, "resize2fs") == 0)	/* -P: the minimum size */
		return pl_has_opt(c, 'P', NULL);
	if (strcmp(n, "tune2fs") == 0 || strcmp(n, "e2fsck") == 0 ||
	    strcmp(n, "fsck") == 0 || strcmp(n, "xfs_repair") == 0)
		return pl_has_opt(c, 'l', NULL) || pl_has_opt(c, 'n', NULL);
	if (strcmp(n, "efibootmgr") == 0) {
		static const char *const w[] = { "-c", "--create", "-C",
		    "--create-only", "-B", "--delete-bootnum", "-o",
		    "--bootorder", "-O", "--delete-bootorder", "-a", "--active",
		    "-A", "--inactive", "-n", "--bootnext", "-N",
		    "--delete-bootnext", "-t", "--timeout", "-T",
		    "--delete-timeout", "-w", "--write-signature", "-D",
		    "--remove-dups", NULL };

		return !pl_has_any(c, w);
	}
	if (strcmp(n, "fwupdmgr") == 0 || strcmp(n, "fwupdtool") == 0) {
		/* Firmware flashers: their get-*, refresh, search and
		 * security forms only show. */
		static const char *const w[] = { "install", "update",
		    "upgrade", "downgrade", "reinstall", "local-install",
		    "install-blob", "switch-branch", "unlock", "activate",
		    "modify-config", "reset-config", "set-bios-setting",
		    "security-fix", "security-undo", "sync", NULL };

		return !pl_has_any(c, w);
	}
	if (strcmp(n, "flashrom") == 0)
		return !pl_has_opt(c, 'w', "--write") && !pl_has_opt(c, 'E',
		    "--erase") && !pl_has_arg(c, "--wp-enable") &&
		    !pl_has_arg(c, "--wp-disable");
	if (strcmp(n, "blockdev") == 0) {
		static const char *const w[] = { "--set", "--flushbufs",
		    "--rereadpt", NULL };

		return !pl_has_prefix(c, w);
	}
	if (strcmp(n, "bootctl") == 0)
		return c->argc < 2 || !(pl_has_arg(c, "install") ||
		    pl_has_arg(c, "update") || pl_has_arg(c, "remove") ||
		    pl_has_arg(c, "set-default") ||
		    pl_has_arg(c, "set-oneshot") ||
		    pl_has_arg(c, "set-timeout") || pl_has_arg(c, "unlink") ||
		    pl_has_arg(c, "cleanup") || pl_has_arg(c, "random-seed"));
	if (strncmp(n, "pv", 2) == 0 || strncmp(n, "vg", 2) == 0 ||
	    strncmp(n, "lv", 2) == 0)
		return pl_has_opt(c, 't', "--test");
	return 0;
}

/* Disk tools that destroy what a device holds (the built-in floor):
 * new filesystems or swap, wiping, discarding, zapping, secure erase. */
static int
disk_destroys(struct pl_cmd *c)
{
	const char *n = c->name;

	if (strcmp(n, "mkfs") == 0 || strcmp(n, "mkswap") == 0 ||
	    strcmp(n, "wipefs") == 0 || strcmp(n, "blkdiscard") == 0 ||
	    strcmp(n, "mkdosfs") == 0 || strcmp(n, "mkntfs") == 0 ||
	    strcmp(n, "sg_format") == 0)
		return 1;
	if (strcmp(n, "sgdisk") == 0)
		return pl_has_opt(c, 'Z', "--zap-all") ||
		    pl_has_opt(c, 'z', "--zap");
	if (strcmp(n, "mdadm") == 0)
		return pl_has_arg(c, "--zero-superblock");
	if (strcmp(n, "cryptsetup") == 0)
		return pl_has_arg(c, "luksFormat") || pl_has_arg(c, "erase") ||
		    pl_has_arg(c, "luksErase");
	if (strcmp(n, "nvme") == 0)
		return c->argc > 1 && (pl_eq(&c->argv[1], "format") ||
		    pl_eq(&c->argv[1], "sanitize"));
	if (strcmp(n, "hdparm") == 0)
		return pl_has_arg(c, "--security-erase") ||
		    pl_has_arg(c, "--security-erase-enhanced") ||
		    pl_has_arg(c, "--write-sector");
	return 0;
}

/* Disk, partition table, bootloader, LVM, RAID and firmware writers:
 * their read-only forms pass (disk_reads); the others change what a
 * disk holds.  Those that change metadata or firmware without naming a
 * device (LVM, RAID, encryption, pools, bootloaders, flash) are judged
 * by their verb; the rest when given a device. */
void
pl_h_disk(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const always[] = { "zpool", "zfs", "vgremove",
	    "lvremove", "vgcreate", "lvcreate", "pvremove", "dmsetup",
	    "cryptsetup", "mdadm", "vgextend", "vgreduce", "vgchange",
	    "vgrename", "vgmerge", "vgsplit", "lvresize", "lvextend",
	    "lvreduce", "lvconvert", "lvrename", "lvchange", "pvmove",
	    "pvresize", "pvchange", "grub-install", "grub2-install",
	    "efibootmgr", "flashrom", "fwupdmgr", "fwupdtool", "bootctl",
	    "nvme", NULL };
	const char *n = c->name;
	struct pl_field name = { .s = n, .len = strlen(n) };
	int dev, g, v;

	if (disk_reads(c) || (c->argc < 2 && strcmp(n, "dmsetup") != 0))
		return;
	/* Deleting a subvolume deletes its tree, as rm -r does. */
	if (strcmp(n, "btrfs") == 0 && (g = btrfs_words(c, &v)) < c->argc &&
	    v < c->argc && btrfs_abbrev(&c->argv[g], "subvolume") &&
	    btrfs_abbrev(&c->argv[v], "delete")) {
		for (v++; v < c->argc; v++)
			if (!pl_is_opt(&c->argv[v]))
				pl_delete_target(an, c, &c->argv[v], 1);
		return;
	}
	dev = any_device(an, c, 1, 1);
	/* mkswap FILE overwrites the file: judged as a write of it. */
	if (!dev && strcmp(n, "mkswap") == 0) {
		int dd = 0;

		if ((g = pl_next_operand(c, 1, "LUpeos", &dd)) < c->argc)
			pl_classify_write(an, &c->argv[g], 0, "'mkswap'");
		return;
	}
	if (!dev && !pl_eq_any(&name, always))
		return;
	pl_find_floor(an, dev && disk_destroys(c) ? PL_FLOOR_DISK : NULL,
	    VG_CAT_DISK, "builtin:disk-tool", c->off, c->len,
	    "'%s' changes a disk, partition table, bootloader, volume or "
	    "firmware", n);
}

/* Image and clone tools: the operand they write. */
void
pl_h_imager(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int ops[8], nops = 0, dd = 0, i;

	if (strcmp(n, "qemu-img") == 0) {
		if (c->argc < 2)
			return;
		if (pl_eq(&c->argv[1], "dd")) {
			for (i = 2; i < c->argc; i++)
				if (strncmp(c->argv[i].s, "of=", 3) == 0)
					pl_classify_write(an, pl_subfield(an,
					    &c->argv[i], 3), 0, "'qemu-img dd'");
			return;
		}
		if (!pl_eq(&c->argv[1], "convert"))
			return;
		for (i = 2; (i = pl_next_operand(c, i, "fOoBlrRsStTmWC", &dd)) <
		    c->argc && nops < 8; i++)
			ops[nops++] = i;
		if (nops >= 2)
			pl_classify_write(an, &c->argv[ops[nops - 1]], 0,
			    "'qemu-img convert'");
		return;
	}
	if (strncmp(n, "partclone", 9) == 0 || strcmp(n, "ntfsclone") == 0) {
		const struct pl_field *o = pl_opt_val(an, c, 'o', "--output");

		if (o == NULL)
			o = pl_opt_val(an, c, 'O', "--overwrite");
		if (o != NULL)
			pl_classify_write(an, o, 0, n);
		return;
	}
	/* ddrescue IN OUT [MAP], bmaptool copy IN OUT: the destination is
	 * bmaptool's last operand (its long options take values:
	 * --bmap FILE, --bmap-sig FILE). */
	for (i = 1; (i = pl_next_operand(c, i, "bcimsxKT", &dd)) < c->argc &&
	    nops < 8; i++)
		ops[nops++] = i;
	if (strcmp(n, "bmaptool") == 0 && nops >= 3 && pl_eq(&c->argv[ops[0]],
	    "copy"))
		pl_classify_write(an, &c->argv[ops[nops - 1]], 0,
		    "'bmaptool copy'");
	else if (strcmp(n, "ddrescue") == 0 && nops >= 2)
		pl_classify_write(an, &c->argv[ops[1]], 0, "'ddrescue'");
}

void
pl_h_mount(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int i, ops = 0;

	if (strcmp(n, "swapon") == 0 && (pl_has_opt(c, 's', "--summary") ||
	    pl_has_arg(c, "--show") || c->argc == 1))
		return;
	/* udisksctl: mounting, unmounting, locking, unlocking and powering
	 * off a drive change it; status, info, dump, monitor and loop-setup
	 * of an image only show or add. */
	if (strcmp(n, "udisksctl") == 0) {
		static const char *const change[] = { "mount", "unmount",
		    "power-off", "lock", "unlock", "loop-delete", NULL };

		if (c->argc < 2 || !pl_eq_any(&c->argv[1], change) ||
		    pl_has_arg(c, "--help") || pl_has_arg(c, "-h"))
			return;
		pl_find(an, VG_CAT_DISK, "builtin:mount", c->off, c->len,
		    "'udisksctl %s' changes a drive or its mounts",
		    c->argv[1].s);
		return;
	}
	if (strcmp(n, "mount") == 0) {
		for (i = 1; i < c->argc; i++)
			if (!pl_is_opt(&c->argv[i]) &&
			    !(i > 1 && (pl_eq(&c->argv[i - 1], "-t") ||
			    pl_eq(&c->argv[i - 1], "-o") ||
			    pl_eq(&c->argv[i - 1], "-O"))))
				ops++;
		if (ops == 0 && !pl_has_opt(c, 'a', "--all"))
			return;
	}
	if (c->argc == 1 && strcmp(n, "swapoff") != 0 &&
	    strcmp(n, "umount") != 0)
		return;
	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-V") ||
	    pl_has_arg(c, "--version"))
		return;
	pl_find(an, VG_CAT_DISK, "builtin:mount", c->off, c->len,
	    "'%s' changes mounted filesystems or swap", n);
}

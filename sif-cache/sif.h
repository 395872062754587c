/*
 * sif.h - the Singularity Image Format header and descriptor table: a
 * parser over caller-supplied bytes and a file check with bounded reads.
 *
 * Layout (little-endian; sylabs/sif pkg/sif/sif.go): a 128-byte global
 * header (launch[32], magic[10] "SIF_MAGIC\0", version[3] "01\0",
 * arch[3], uuid[16], int64 ctime, mtime, descriptors free, total, offset,
 * size, data offset, size), then descriptors of 585 bytes each.  The file
 * check reads the header, the descriptor table and 4 bytes at the primary
 * partition (squashfs magic "hsqs") and nothing else, so a 1 GB image
 * verifies in microseconds; it never hashes the data (cache.c does that
 * once, when pulling).
 */
#ifndef VG_SIF_H
#define VG_SIF_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define VG_SIF_HEADER_LEN	128
#define VG_SIF_DESCR_LEN	585
#define VG_SIF_MAX_DESCR	4096	/* more is not a sane image */

/* Descriptor data types (sif.go DataType). */
enum vg_sif_datatype {
	VG_SIF_DEFFILE = 0x4001,
	VG_SIF_ENVVAR = 0x4002,
	VG_SIF_LABELS = 0x4003,
	VG_SIF_PARTITION = 0x4004,
	VG_SIF_SIGNATURE = 0x4005,
	VG_SIF_GENERICJSON = 0x4006,
	VG_SIF_GENERIC = 0x4007,
	VG_SIF_CRYPTOMESSAGE = 0x4008,
	VG_SIF_SBOM = 0x4009,
	VG_SIF_OCIROOTINDEX = 0x400a,
	VG_SIF_OCIBLOB = 0x400b,
};

/* Partition file system and type (sif.go FSType, PartType). */
#define VG_SIF_FS_SQUASH	1
#define VG_SIF_PART_SYSTEM	1
#define VG_SIF_PART_PRIMSYS	2

/* The parsed global header. */
struct vg_sif_header {
	char		arch[3];	/* "02" amd64, "04" arm64, ... */
	int64_t		ctime, mtime;
	int64_t		dfree, dtotal;
	int64_t		descroff, descrlen;
	int64_t		dataoff, datalen;
};

/* One used descriptor, the fields the checks need. */
struct vg_sif_descr {
	int32_t		datatype;
	uint32_t	id;
	int64_t		offset, size;
	int32_t		fstype, parttype;	/* partitions only */
	char		arch[3];		/* partitions only */
};

/* The SIF architecture code of this build's host ("02" on x86_64). */
const char *vg_sif_host_arch(void);
/* A readable name for an architecture code ("amd64"), or "unknown". */
const char *vg_sif_arch_name(const char *code);

/*
 * Parses a 128-byte global header.  Fails with VG_EPARSE naming the field
 * (bad magic, unsupported version, negative or overflowing offsets).
 */
int	vg_sif_parse_header(const unsigned char *p, size_t len,
	    struct vg_sif_header *h, struct vg_err *e);

/*
 * Parses one 585-byte descriptor.  *used is set to whether the slot is in
 * use; unused slots are not checked further.
 */
int	vg_sif_parse_descr(const unsigned char *p, size_t len,
	    struct vg_sif_descr *d, int *used, struct vg_err *e);

/*
 * Checks a whole image held in memory (used by the fuzzer and tests):
 * header, descriptor table within size, every used descriptor's data
 * within size, a primary system partition of squashfs beginning "hsqs".
 * arch NULL means the host's.
 */
int	vg_sif_check_mem(const unsigned char *p, size_t size,
	    const char *arch, struct vg_err *e);

/*
 * Checks the image at path (header, descriptors, squashfs magic, host
 * architecture) with bounded reads.  VG_ENOENT when missing, VG_EPARSE
 * naming what is wrong otherwise ("'x.sif': descriptor 3 data (offset
 * 4096, size 1048576) ends beyond the end of the file (8192 bytes)").
 * Does not update the file's atime where O_NOATIME is allowed.  Blocks
 * on a few small reads.
 */
int	vg_sif_verify_file(const char *path, struct vg_err *e);
/* Same on an open descriptor; name is used in messages. */
int	vg_sif_verify_fd(int fd, const char *name, const char *arch,
	    struct vg_err *e);

#endif

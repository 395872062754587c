/*
 * sif.c - checks a SIF image's global header, its descriptor table and
 * the start of its primary partition, reading only those few bytes.
 *
 * The offsets below are those of sylabs/sif (pkg/sif/sif.go): the header
 * and the descriptors are packed little-endian Go structs written with
 * encoding/binary, so there is no padding.  The data itself is never read
 * here; cache.c hashes an image once when it pulls it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "sif-cache/sif.h"

/* Global header field offsets (sif.go header). */
#define H_MAGIC		32
#define H_VERSION	42
#define H_ARCH		45
#define H_CTIME		64
#define H_MTIME		72
#define H_DFREE		80
#define H_DTOTAL	88
#define H_DESCROFF	96
#define H_DESCRLEN	104
#define H_DATAOFF	112
#define H_DATALEN	120

/* Descriptor field offsets (sif.go rawDescriptor). */
#define D_DATATYPE	0
#define D_USED		4
#define D_ID		5
#define D_OFFSET	17
#define D_SIZE		25
#define D_EXTRA		201
/* Partition extra data: int32 fstype, int32 parttype, arch[3]. */
#define P_FSTYPE	(D_EXTRA + 0)
#define P_PARTTYPE	(D_EXTRA + 4)
#define P_ARCH		(D_EXTRA + 8)

/* File system types beyond squashfs that Apptainer can mount. */
#define FS_EXT3		2
#define FS_ENC_SQUASH	5

/* Architecture codes (sif.go HdrArch*). */
static const struct {
	const char	*code;
	const char	*name;
} sif_arches[] = {
	{ .code = "01", .name = "386" },
	{ .code = "02", .name = "amd64" },
	{ .code = "03", .name = "arm" },
	{ .code = "04", .name = "arm64" },
	{ .code = "05", .name = "ppc64" },
	{ .code = "06", .name = "ppc64le" },
	{ .code = "07", .name = "mips" },
	{ .code = "08", .name = "mipsle" },
	{ .code = "09", .name = "mips64" },
	{ .code = "10", .name = "mips64le" },
	{ .code = "11", .name = "s390x" },
	{ .code = "12", .name = "riscv64" },
};

/* Reads a little-endian 64-bit signed integer. */
static int64_t
le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return (int64_t)v;
}

/* Reads a little-endian 32-bit unsigned integer. */
static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

const char *
vg_sif_host_arch(void)
{
#if defined(__x86_64__)
	return "02";
#elif defined(__aarch64__)
	return "04";
#elif defined(__i386__)
	return "01";
#elif defined(__arm__)
	return "03";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return "06";
#elif defined(__powerpc64__)
	return "05";
#elif defined(__s390x__)
	return "11";
#elif defined(__riscv) && __riscv_xlen == 64
	return "12";
#else
	return "00";
#endif
}

const char *
vg_sif_arch_name(const char *code)
{
	size_t i;

	for (i = 0; i < sizeof(sif_arches) / sizeof(sif_arches[0]); i++)
		if (strcmp(sif_arches[i].code, code) == 0)
			return sif_arches[i].name;
	return "unknown";
}

/* Copies a 3-byte NUL-terminated code field, making it printable. */
static void
copy_code(char out[3], const unsigned char *p)
{
	out[0] = (p[0] >= '0' && p[0] <= '9') ? (char)p[0] : '?';
	out[1] = (p[1] >= '0' && p[1] <= '9') ? (char)p[1] : '?';
	out[2] = '\0';
}

int
vg_sif_parse_header(const unsigned char *p, size_t len,
    struct vg_sif_header *h, struct vg_err *e)
{
	memset(h, 0, sizeof(*h));
	if (len < VG_SIF_HEADER_LEN)
		return vg_err_set(e, VG_EPARSE, "file is %zu bytes, shorter "
		    "than the %d-byte SIF header", len, VG_SIF_HEADER_LEN);
	if (memcmp(p + H_MAGIC, "SIF_MAGIC\0", 10) != 0)
		return vg_err_set(e, VG_EPARSE, "not a SIF image (no "
		    "\"SIF_MAGIC\" at offset %d)", H_MAGIC);
	if (memcmp(p + H_VERSION, "01\0", 3) != 0)
		return vg_err_set(e, VG_EPARSE, "unsupported SIF version "
		    "\"%.2s\" (expected \"01\")", p + H_VERSION);
	if (p[H_ARCH + 2] != '\0')
		return vg_err_set(e, VG_EPARSE, "malformed architecture field "
		    "in the SIF header");
	copy_code(h->arch, p + H_ARCH);
	h->ctime = le64(p + H_CTIME);
	h->mtime = le64(p + H_MTIME);
	h->dfree = le64(p + H_DFREE);
	h->dtotal = le64(p + H_DTOTAL);
	h->descroff = le64(p + H_DESCROFF);
	h->descrlen = le64(p + H_DESCRLEN);
	h->dataoff = le64(p + H_DATAOFF);
	h->datalen = le64(p + H_DATALEN);
	if (h->dtotal <= 0 || h->dtotal > VG_SIF_MAX_DESCR)
		return vg_err_set(e, VG_EPARSE, "descriptor count %lld out of "
		    "range (1 to %d)", (long long)h->dtotal, VG_SIF_MAX_DESCR);
	if (h->dfree < 0 || h->dfree > h->dtotal)
		return vg_err_set(e, VG_EPARSE, "free descriptor count %lld "
		    "out of range (0 to %lld)", (long long)h->dfree,
		    (long long)h->dtotal);
	if (h->descroff < VG_SIF_HEADER_LEN || h->descroff > INT64_MAX / 2)
		return vg_err_set(e, VG_EPARSE, "descriptor table offset %lld "
		    "out of range", (long long)h->descroff);
	if (h->descrlen < h->dtotal * VG_SIF_DESCR_LEN)
		return vg_err_set(e, VG_EPARSE, "descriptor table size %lld "
		    "is less than %lld descriptors of %d bytes",
		    (long long)h->descrlen, (long long)h->dtotal,
		    VG_SIF_DESCR_LEN);
	if (h->descrlen > INT64_MAX / 2)
		return vg_err_set(e, VG_EPARSE, "descriptor table size %lld "
		    "out of range", (long long)h->descrlen);
	if (h->dataoff < 0 || h->datalen < 0 || h->dataoff > INT64_MAX / 2 ||
	    h->datalen > INT64_MAX / 2)
		return vg_err_set(e, VG_EPARSE, "data section (offset %lld, "
		    "size %lld) out of range", (long long)h->dataoff,
		    (long long)h->datalen);
	return 0;
}

int
vg_sif_parse_descr(const unsigned char *p, size_t len,
    struct vg_sif_descr *d, int *used, struct vg_err *e)
{
	memset(d, 0, sizeof(*d));
	*used = 0;
	if (len < VG_SIF_DESCR_LEN)
		return vg_err_set(e, VG_EPARSE, "descriptor is %zu bytes, "
		    "expected %d", len, VG_SIF_DESCR_LEN);
	if (p[D_USED] > 1)
		return vg_err_set(e, VG_EPARSE, "descriptor used flag is %u "
		    "(expected 0 or 1)", p[D_USED]);
	*used = p[D_USED];
	d->datatype = (int32_t)le32(p + D_DATATYPE);
	d->id = le32(p + D_ID);
	d->offset = le64(p + D_OFFSET);
	d->size = le64(p + D_SIZE);
	if (!*used)
		return 0;
	if (d->datatype < VG_SIF_DEFFILE || d->datatype > 0x40ff)
		return vg_err_set(e, VG_EPARSE, "descriptor %u has unknown "
		    "data type 0x%x", d->id, (unsigned)d->datatype);
	if (d->offset < 0 || d->size < 0 || d->offset > INT64_MAX / 2 ||
	    d->size > INT64_MAX / 2)
		return vg_err_set(e, VG_EPARSE, "descriptor %u data (offset "
		    "%lld, size %lld) out of range", d->id,
		    (long long)d->offset, (long long)d->size);
	if (d->datatype == VG_SIF_PARTITION) {
		d->fstype = (int32_t)le32(p + P_FSTYPE);
		d->parttype = (int32_t)le32(p + P_PARTTYPE);
		copy_code(d->arch, p + P_ARCH);
	}
	return 0;
}

/* The magic a partition of file system type fstype starts with. */
static int
part_magic(int32_t fstype, int64_t *off, const char **magic, size_t *len,
    const char **fsname)
{
	switch (fstype) {
	case VG_SIF_FS_SQUASH:
		/* squashfs super block: s_magic 0x73717368, "hsqs" on disk */
		*off = 0, *magic = "hsqs", *len = 4, *fsname = "squashfs";
		return 0;
	case FS_EXT3:
		/* ext2/3/4: s_magic 0xEF53 at 1024 + 56 */
		*off = 1080, *magic = "\x53\xef", *len = 2, *fsname = "ext3";
		return 0;
	case FS_ENC_SQUASH:
		/* LUKS2 header, cryptsetup docs/on-disk-format-luks2 */
		*off = 0, *magic = "LUKS\xba\xbe", *len = 6;
		*fsname = "encrypted squashfs";
		return 0;
	}
	return -1;
}

/*
 * The checks shared by the file and memory forms.  read_at(ctx, off, buf,
 * len) returns 0 when len bytes at off were read.
 */
static int
sif_check(int (*read_at)(void *, int64_t, void *, size_t), void *ctx,
    int64_t size, const char *arch, struct vg_err *e)
{
	unsigned char hdr[VG_SIF_HEADER_LEN], *table = NULL, m[8];
	struct vg_sif_header h;
	struct vg_sif_descr d, prim;
	const char *magic, *fsname;
	int64_t i, tlen, moff;
	size_t mlen;
	int used, nprim = 0, rc;

	if (arch == NULL)
		arch = vg_sif_host_arch();
	if (size < VG_SIF_HEADER_LEN)
		return vg_err_set(e, VG_EPARSE, "file is %lld bytes, shorter "
		    "than the %d-byte SIF header (truncated?)",
		    (long long)size, VG_SIF_HEADER_LEN);
	if (read_at(ctx, 0, hdr, sizeof(hdr)) != 0)
		return vg_err_errno(e, "cannot read the SIF header");
	if ((rc = vg_sif_parse_header(hdr, sizeof(hdr), &h, e)) != 0)
		return rc;
	tlen = h.dtotal * VG_SIF_DESCR_LEN;
	if (h.descroff + tlen > size)
		return vg_err_set(e, VG_EPARSE, "descriptor table (offset "
		    "%lld, %lld bytes) ends beyond the end of the file (%lld "
		    "bytes; truncated?)", (long long)h.descroff,
		    (long long)tlen, (long long)size);
	if (h.dataoff + h.datalen > size)
		return vg_err_set(e, VG_EPARSE, "data section (offset %lld, "
		    "size %lld) ends beyond the end of the file (%lld bytes; "
		    "truncated?)", (long long)h.dataoff, (long long)h.datalen,
		    (long long)size);
	table = malloc((size_t)tlen);
	if (table == NULL)
		return vg_err_set(e, VG_ENOMEM, "out of memory");
	if (read_at(ctx, h.descroff, table, (size_t)tlen) != 0) {
		rc = vg_err_errno(e, "cannot read the descriptor table");
		goto out;
	}
	memset(&prim, 0, sizeof(prim));
	for (i = 0; i < h.dtotal; i++) {
		rc = vg_sif_parse_descr(table + i * VG_SIF_DESCR_LEN,
		    VG_SIF_DESCR_LEN, &d, &used, e);
		if (rc != 0)
			goto out;
		if (!used)
			continue;
		if (d.offset + d.size > size) {
			rc = vg_err_set(e, VG_EPARSE, "descriptor %u data "
			    "(offset %lld, size %lld) ends beyond the end of "
			    "the file (%lld bytes; truncated?)", d.id,
			    (long long)d.offset, (long long)d.size,
			    (long long)size);
			goto out;
		}
		if (d.datatype == VG_SIF_PARTITION &&
		    d.parttype == VG_SIF_PART_PRIMSYS) {
			prim = d;
			nprim++;
		}
	}
	if (nprim != 1) {
		rc = vg_err_set(e, VG_EPARSE, nprim == 0 ? "no primary system "
		    "partition (an OCI-SIF or data-only image cannot be run)" :
		    "%d primary system partitions (expected one)", nprim);
		goto out;
	}
	if (part_magic(prim.fstype, &moff, &magic, &mlen, &fsname) != 0) {
		rc = vg_err_set(e, VG_EPARSE, "primary partition (descriptor "
		    "%u) has file system type %d (expected 1, squashfs)",
		    prim.id, prim.fstype);
		goto out;
	}
	if (moff + (int64_t)mlen > prim.size) {
		rc = vg_err_set(e, VG_EPARSE, "primary partition (descriptor "
		    "%u) is %lld bytes, too small for %s", prim.id,
		    (long long)prim.size, fsname);
		goto out;
	}
	if (read_at(ctx, prim.offset + moff, m, mlen) != 0) {
		rc = vg_err_errno(e, "cannot read the primary partition");
		goto out;
	}
	if (memcmp(m, magic, mlen) != 0) {
		rc = vg_err_set(e, VG_EPARSE, "primary partition (descriptor "
		    "%u, offset %lld) does not start with the %s magic "
		    "(corrupt?)", prim.id, (long long)prim.offset, fsname);
		goto out;
	}
	if (strcmp(h.arch, arch) != 0) {
		rc = vg_err_set(e, VG_EUNSUPPORTED, "image is built for %s "
		    "(SIF arch \"%s\"), this host is %s", vg_sif_arch_name(
		    h.arch), h.arch, vg_sif_arch_name(arch));
		goto out;
	}
	if (strcmp(prim.arch, arch) != 0) {
		rc = vg_err_set(e, VG_EUNSUPPORTED, "primary partition is "
		    "built for %s (SIF arch \"%s\"), this host is %s",
		    vg_sif_arch_name(prim.arch), prim.arch,
		    vg_sif_arch_name(arch));
		goto out;
	}
	rc = 0;
out:
	free(table);
	return rc;
}

struct mem_src {
	const unsigned char	*p;
	size_t			 size;
};

/* read_at over a memory buffer. */
static int
mem_read_at(void *ctx, int64_t off, void *buf, size_t len)
{
	struct mem_src *m = ctx;

	if (off < 0 || (uint64_t)off > m->size || len > m->size - (size_t)off) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, m->p + off, len);
	return 0;
}

int
vg_sif_check_mem(const unsigned char *p, size_t size, const char *arch,
    struct vg_err *e)
{
	struct mem_src m = { .p = p, .size = size };

	if (size > INT64_MAX / 4)
		return vg_err_set(e, VG_ELIMIT, "image too large");
	return sif_check(mem_read_at, &m, (int64_t)size, arch, e);
}

/* read_at over a file descriptor: pread until len bytes or EOF. */
static int
fd_read_at(void *ctx, int64_t off, void *buf, size_t len)
{
	int fd = *(int *)ctx;
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			/* shrunk since fstat: report it as a short file */
			errno = EIO;
			return -1;
		}
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

int
vg_sif_verify_fd(int fd, const char *name, const char *arch,
    struct vg_err *e)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) != 0)
		return vg_err_errno(e, "cannot stat '%s'", name);
	if (!S_ISREG(st.st_mode))
		return vg_err_set(e, VG_EPARSE, "'%s' is not a regular file",
		    name);
	rc = sif_check(fd_read_at, &fd, (int64_t)st.st_size, arch, e);
	if (rc != 0)
		vg_err_prefix(e, "'%s': ", name);
	return rc;
}

/*
 * Opens path for reading without updating its atime when the kernel
 * allows it (O_NOATIME needs ownership or CAP_FOWNER): verification must
 * not count as a use for a site's atime-based purge.
 */
static int
open_noatime(const char *path)
{
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd;
}

int
vg_sif_verify_file(const char *path, struct vg_err *e)
{
	int fd, rc;

	fd = open_noatime(path);
	if (fd < 0) {
		if (errno == ENOENT)
			return vg_err_set(e, VG_ENOENT, "'%s' does not exist",
			    path);
		return vg_err_errno(e, "cannot open '%s'", path);
	}
	rc = vg_sif_verify_fd(fd, path, NULL, e);
	close(fd);
	return rc;
}

/*
 * sifgen.c - small SIF images for tests (see sifgen.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sifgen.h"

void
sifgen_put64(unsigned char *p, int64_t v)
{
	uint64_t u = (uint64_t)v;
	int i;

	for (i = 0; i < 8; i++, u >>= 8)
		p[i] = (unsigned char)(u & 0xff);
}

void
sifgen_put32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++, v >>= 8)
		p[i] = (unsigned char)(v & 0xff);
}

unsigned char *
sifgen_build(const char *arch, size_t part_size, size_t *len)
{
	static const char def[] = "Bootstrap: scratch\n";
	unsigned char *p, *d;
	size_t total;

	if (part_size < 4)
		part_size = 4;
	total = SIFGEN_PART_OFF + part_size;
	p = calloc(1, total);
	if (p == NULL)
		abort();
	memcpy(p, "#!/usr/bin/env run-singularity\n", 31);
	memcpy(p + 32, "SIF_MAGIC", 10);
	memcpy(p + 42, "01", 3);
	memcpy(p + 45, arch, 3);
	memset(p + 48, 0x5a, 16);			/* uuid */
	sifgen_put64(p + 64, 1700000000);		/* ctime */
	sifgen_put64(p + 72, 1700000000);		/* mtime */
	sifgen_put64(p + 80, SIFGEN_NDESCR - 2);	/* free */
	sifgen_put64(p + 88, SIFGEN_NDESCR);		/* total */
	sifgen_put64(p + 96, SIFGEN_DESCROFF);
	sifgen_put64(p + 104, SIFGEN_NDESCR * 585);
	sifgen_put64(p + 112, SIFGEN_DEFFILE_OFF);
	sifgen_put64(p + 120, (int64_t)(total - SIFGEN_DEFFILE_OFF));

	/* descriptor 1: definition file */
	d = p + SIFGEN_DESCROFF;
	sifgen_put32(d + 0, 0x4001);
	d[4] = 1;
	sifgen_put32(d + 5, 1);
	sifgen_put64(d + 17, SIFGEN_DEFFILE_OFF);
	sifgen_put64(d + 25, (int64_t)(sizeof(def) - 1));
	sifgen_put64(d + 33, (int64_t)(sizeof(def) - 1));
	memcpy(d + 73, "deffile", 7);
	memcpy(p + SIFGEN_DEFFILE_OFF, def, sizeof(def) - 1);

	/* descriptor 2: primary system partition, squashfs */
	d += 585;
	sifgen_put32(d + 0, 0x4004);
	d[4] = 1;
	sifgen_put32(d + 5, 2);
	sifgen_put64(d + 17, SIFGEN_PART_OFF);
	sifgen_put64(d + 25, (int64_t)part_size);
	sifgen_put64(d + 33, (int64_t)part_size);
	memcpy(d + 73, "rootfs.squashfs", 15);
	sifgen_put32(d + 201, 1);			/* fstype squashfs */
	sifgen_put32(d + 205, 2);			/* parttype primsys */
	memcpy(d + 209, arch, 3);
	memcpy(p + SIFGEN_PART_OFF, "hsqs", 4);

	*len = total;
	return p;
}

int
sifgen_write(const char *path, const void *p, size_t len)
{
	const char *s = p;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (len > 0) {
		n = write(fd, s, len);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return close(fd);
}

int
sifgen_write_image(const char *path, const char *arch, size_t part_size)
{
	unsigned char *p;
	size_t len;
	int rc;

	p = sifgen_build(arch, part_size, &len);
	rc = sifgen_write(path, p, len);
	free(p);
	return rc;
}

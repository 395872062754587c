/*
 * sifgen.h - builds small SIF images in memory for the SIF cache tests,
 * following the documented layout (sif-cache/sif.h): a global header, a
 * table of four descriptors (a definition file and a primary squashfs
 * partition in use), the definition file, then the partition, which
 * starts with the squashfs magic.
 */
#ifndef VG_TEST_SIFGEN_H
#define VG_TEST_SIFGEN_H

#include <stddef.h>
#include <stdint.h>

/* Offsets a test may corrupt. */
#define SIFGEN_DESCROFF		4096
#define SIFGEN_NDESCR		4
#define SIFGEN_DEFFILE_OFF	(SIFGEN_DESCROFF + SIFGEN_NDESCR * 585)
#define SIFGEN_PART_OFF		8192

/*
 * Returns a malloc'ed image (caller frees) of *len bytes whose partition
 * is part_size bytes (>= 4) and whose architecture code is arch ("02").
 */
unsigned char *sifgen_build(const char *arch, size_t part_size, size_t *len);

/* Writes len bytes to path (mode 0644); 0 or -1. */
int	sifgen_write(const char *path, const void *p, size_t len);

/* Builds and writes an image; 0 or -1. */
int	sifgen_write_image(const char *path, const char *arch,
	    size_t part_size);

/* Little-endian stores for tests that patch fields. */
void	sifgen_put64(unsigned char *p, int64_t v);
void	sifgen_put32(unsigned char *p, uint32_t v);

#endif

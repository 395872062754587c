/*
 * sha256.h - SHA-256 (FIPS 180-4) for content addressing of images.  The
 * cache hashes each image once, while pulling it; no other code needs a
 * cryptographic library, so this small implementation avoids linking one.
 */
#ifndef VG_SHA256_H
#define VG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "runner/err.h"

struct vg_sha256 {
	uint32_t	h[8];
	uint64_t	len;		/* bytes hashed so far */
	unsigned char	buf[64];
	size_t		nbuf;
};

void	vg_sha256_init(struct vg_sha256 *s);
void	vg_sha256_update(struct vg_sha256 *s, const void *p, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex. */
void	vg_sha256_hex(struct vg_sha256 *s, char hex[65]);
/* One-shot hex digest of a string. */
void	vg_sha256_str(const char *str, char hex[65]);
/* Hex digest of a whole file read from fd (from its current offset). */
int	vg_sha256_fd(int fd, const char *name, char hex[65],
	    struct vg_err *e);

#endif

/*
 * sha256.h - SHA-256 for content addressing of images, over OpenSSL's
 * libcrypto (already a dependency of libssh).  The cache hashes each image
 * once, while pulling it.
 */
#ifndef VG_SHA256_H
#define VG_SHA256_H

#include <stddef.h>

#include "common/err.h"

struct vg_sha256 {
	void	*ctx;		/* EVP_MD_CTX; NULL after vg_sha256_hex */
};

/* Starts a digest; aborts when out of memory, like vg_xmalloc. */
void	vg_sha256_init(struct vg_sha256 *s);
void	vg_sha256_update(struct vg_sha256 *s, const void *p, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex, and
 * releases the context. */
void	vg_sha256_hex(struct vg_sha256 *s, char hex[65]);
/* Releases a digest that was abandoned; safe after vg_sha256_hex. */
void	vg_sha256_release(struct vg_sha256 *s);
/* One-shot hex digest of a string. */
void	vg_sha256_str(const char *str, char hex[65]);
/* Hex digest of a whole file read from fd (from its current offset). */
int	vg_sha256_fd(int fd, const char *name, char hex[65],
	    struct vg_err *e);

#endif

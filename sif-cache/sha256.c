/*
 * sha256.c - SHA-256 digests through libcrypto's EVP interface.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/buf.h"
#include "sif-cache/sha256.h"

void
vg_sha256_init(struct vg_sha256 *s)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		fprintf(stderr, "vigil: cannot start a sha256 digest\n");
		abort();
	}
	s->ctx = ctx;
}

void
vg_sha256_update(struct vg_sha256 *s, const void *p, size_t n)
{
	if (n > 0)
		(void)EVP_DigestUpdate(s->ctx, p, n);
}

void
vg_sha256_hex(struct vg_sha256 *s, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	(void)EVP_DigestFinal_ex(s->ctx, md, &len);
	for (i = 0; i < 32 && i < len; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	vg_sha256_release(s);
}

void
vg_sha256_release(struct vg_sha256 *s)
{
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
}

void
vg_sha256_str(const char *str, char hex[65])
{
	struct vg_sha256 s;

	vg_sha256_init(&s);
	vg_sha256_update(&s, str, strlen(str));
	vg_sha256_hex(&s, hex);
}

int
vg_sha256_fd(int fd, const char *name, char hex[65], struct vg_err *e)
{
	unsigned char *chunk = vg_xmalloc(1 << 16);
	struct vg_sha256 s;
	ssize_t n;
	int rc = 0;

	vg_sha256_init(&s);
	for (;;) {
		n = read(fd, chunk, 1 << 16);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = vg_err_errno(e, "cannot read '%s'", name);
			break;
		}
		if (n == 0)
			break;
		vg_sha256_update(&s, chunk, (size_t)n);
	}
	free(chunk);
	if (rc == 0)
		vg_sha256_hex(&s, hex);
	else
		vg_sha256_release(&s);
	return rc;
}

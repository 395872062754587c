/*
 * sha256.c - SHA-256 digests through libcrypto's EVP interface.
 *
 * libcrypto is loaded on the first digest (common/dl.h), not linked:
 * most vigil processes never make one, and its loading costs a start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/buf.h"
#include "common/dl.h"
#include "sif-cache/sha256.h"

#define VG_EVP_FUNCS(X) \
	X(EVP_MD_CTX *, EVP_MD_CTX_new, (void)) \
	X(void, EVP_MD_CTX_free, (EVP_MD_CTX *)) \
	X(const EVP_MD *, EVP_sha256, (void)) \
	X(int, EVP_DigestInit_ex, (EVP_MD_CTX *, const EVP_MD *, ENGINE *)) \
	X(int, EVP_DigestUpdate, (EVP_MD_CTX *, const void *, size_t)) \
	X(int, EVP_DigestFinal_ex, (EVP_MD_CTX *, unsigned char *, \
	    unsigned int *))

static struct {
#define X(ret, name, params) ret (*name) params;
	VG_EVP_FUNCS(X)
#undef X
} evp;

static int
bind_crypto(struct vg_dl *d, void *h)
{
#define X(ret, name, params) \
	if (vg_dl_sym(d, h, #name, (void **)&evp.name) != 0) \
		return -1;
	VG_EVP_FUNCS(X)
#undef X
	return 0;
}

static struct vg_dl lib = {
	.soname = "libcrypto.so.3", .env = NULL, .package = "libssl3",
	.bind = bind_crypto, .once = PTHREAD_ONCE_INIT,
};

static void
load(void)
{
	vg_dl_load(&lib);
}

void
vg_sha256_init(struct vg_sha256 *s)
{
	EVP_MD_CTX *ctx;

	if (vg_dl_ready(&lib, load) != 0) {
		fprintf(stderr, "vigil: cannot make a sha256 digest: %s\n",
		    lib.why);
		abort();
	}
	ctx = evp.EVP_MD_CTX_new();
	if (ctx == NULL ||
	    evp.EVP_DigestInit_ex(ctx, evp.EVP_sha256(), NULL) != 1) {
		fprintf(stderr, "vigil: cannot start a sha256 digest\n");
		abort();
	}
	s->ctx = ctx;
}

void
vg_sha256_update(struct vg_sha256 *s, const void *p, size_t n)
{
	if (n > 0)
		(void)evp.EVP_DigestUpdate(s->ctx, p, n);
}

void
vg_sha256_hex(struct vg_sha256 *s, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	(void)evp.EVP_DigestFinal_ex(s->ctx, md, &len);
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
	if (s->ctx != NULL)
		evp.EVP_MD_CTX_free(s->ctx);
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

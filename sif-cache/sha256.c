/*
 * sha256.c - SHA-256 as specified in FIPS 180-4, section 6.2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/buf.h"
#include "sif-cache/sha256.h"

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

/* Processes one 64-byte block (FIPS 180-4 6.2.2). */
static void
block(struct vg_sha256 *s, const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
		    (w[i - 2] >> 10)) + w[i - 7] + (ROR(w[i - 15], 7) ^
		    ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 16];
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1;
		d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

void
vg_sha256_init(struct vg_sha256 *s)
{
	/* FIPS 180-4 5.3.3 */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
	s->nbuf = 0;
}

void
vg_sha256_update(struct vg_sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t take;

	s->len += n;
	if (s->nbuf > 0) {
		take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take, p += take, n -= take;
		if (s->nbuf < 64)
			return;
		block(s, s->buf);
		s->nbuf = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		block(s, p);
	memcpy(s->buf, p, n);
	s->nbuf = n;
}

void
vg_sha256_hex(struct vg_sha256 *s, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	uint64_t bits = s->len * 8;
	unsigned char pad[72];
	size_t npad;
	int i;

	/* 0x80, zeros to 56 mod 64, then the length in bits, big-endian */
	npad = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
	memset(pad, 0, sizeof(pad));
	pad[0] = 0x80;
	for (i = 0; i < 8; i++)
		pad[npad + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
	vg_sha256_update(s, pad, npad + 8);
	for (i = 0; i < 32; i++) {
		unsigned v = (s->h[i / 4] >> (24 - 8 * (i % 4))) & 0xff;

		hex[2 * i] = digits[v >> 4];
		hex[2 * i + 1] = digits[v & 15];
	}
	hex[64] = '\0';
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
	return rc;
}

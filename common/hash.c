/*
 * hash.c - XXH64, written from the xxHash specification
 * (doc/xxhash_spec.md of https://github.com/Cyan4973/xxHash): the five
 * primes and the round, merge and avalanche steps are the spec's.
 * Reads are little-endian by memcpy, so any alignment is fine.
 */
#include <sys/mman.h>

#include <stdio.h>
#include <string.h>

#include "common/hash.h"

/* The spec's PRIME64_1 .. PRIME64_5. */
#define P1	11400714785074694791ULL
#define P2	14029467366897019727ULL
#define P3	1609587929392839161ULL
#define P4	9650029242287828579ULL
#define P5	2870177450012600261ULL

/* Rotates v left by r bits (0 < r < 64). */
static inline uint64_t
rotl(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

/* A little-endian 64-bit word at p. */
static inline uint64_t
rd64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* A little-endian 32-bit word at p. */
static inline uint64_t
rd32(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	    (uint64_t)p[3] << 24;
}

/* One lane's round over an input word. */
static inline uint64_t
round64(uint64_t acc, uint64_t in)
{
	acc += in * P2;
	acc = rotl(acc, 31);
	return acc * P1;
}

/* Folds lane value v into the accumulator h. */
static inline uint64_t
merge64(uint64_t h, uint64_t v)
{
	h ^= round64(0, v);
	return h * P1 + P4;
}

uint64_t
vg_hash64(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data, *end = p + n;
	uint64_t h, v1, v2, v3, v4;

	if (n >= 32) {
		v1 = seed + P1 + P2;
		v2 = seed + P2;
		v3 = seed;
		v4 = seed - P1;
		do {
			v1 = round64(v1, rd64(p));
			v2 = round64(v2, rd64(p + 8));
			v3 = round64(v3, rd64(p + 16));
			v4 = round64(v4, rd64(p + 24));
			p += 32;
		} while ((size_t)(end - p) >= 32);
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
		h = merge64(h, v1);
		h = merge64(h, v2);
		h = merge64(h, v3);
		h = merge64(h, v4);
	} else
		h = seed + P5;
	h += (uint64_t)n;
	for (; end - p >= 8; p += 8)
		h = rotl(h ^ round64(0, rd64(p)), 27) * P1 + P4;
	if (end - p >= 4) {
		h = rotl(h ^ (rd32(p) * P1), 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl(h ^ (*p * P5), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

void
vg_hash128_hex(const void *p, size_t n, char out[33])
{
	snprintf(out, 33, "%016llx%016llx",
	    (unsigned long long)vg_hash64(p, n, 0),
	    (unsigned long long)vg_hash64(p, n, 1));
}

int
vg_hash_fd_hex(int fd, uint64_t size, char hex[17])
{
	void *p;

	if (size == 0) {
		snprintf(hex, 17, "%016llx",
		    (unsigned long long)vg_hash64("", 0, 0));
		return 0;
	}
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	snprintf(hex, 17, "%016llx",
	    (unsigned long long)vg_hash64(p, (size_t)size, 0));
	munmap(p, (size_t)size);
	return 0;
}

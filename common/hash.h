/*
 * hash.h - a fast non-cryptographic hash of bytes: XXH64 (Yann Collet's
 * xxHash, 64-bit variant, https://github.com/Cyan4973/xxHash, spec in
 * doc/xxhash_spec.md), for telling contents apart where no adversary
 * chooses them (the reuse keys' input files and descriptions,
 * runner/core/reuse.h).  Never for anything a task could forge to
 * collide.
 */
#ifndef VG_HASH_H
#define VG_HASH_H

#include <stddef.h>
#include <stdint.h>

/* XXH64 of the n bytes at p with seed; pure, never fails. */
uint64_t	vg_hash64(const void *p, size_t n, uint64_t seed);

/* 32 lowercase hex digits (and a NUL) into out: XXH64 of p with seeds
 * 0 and 1, a 128-bit name for a description. */
void		vg_hash128_hex(const void *p, size_t n, char out[33]);

/* XXH64 (seed 0) of the size bytes of the open regular file fd, read
 * through a private read-only mapping, as 16 lowercase hex digits (and
 * a NUL) into hex.  0, or -1 with errno when it cannot be mapped. */
int		vg_hash_fd_hex(int fd, uint64_t size, char hex[17]);

#endif

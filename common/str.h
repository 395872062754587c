/*
 * str.h - bounded string copies into fixed-size character arrays (the
 * handle, node and reason fields of records), in one place instead of a
 * local helper per file.  banned.h-style: no strncpy(3), whose result
 * may lack its terminator.
 */
#ifndef VG_STR_H
#define VG_STR_H

#include <stddef.h>

/*
 * Like strlcpy(3): copies src (NULL reads as "") into dst of n bytes,
 * truncating, always NUL-terminated when n > 0.  Returns 1 when src did
 * not fit (dst holds its first n - 1 bytes), 0 otherwise.
 */
int	vg_strlcpy(char *dst, const char *src, size_t n);

#endif

/*
 * str.c - bounded string copies; see str.h.
 */
#include <string.h>

#include "common/str.h"

int
vg_strlcpy(char *dst, const char *src, size_t n)
{
	size_t l;

	if (n == 0)
		return src != NULL && *src != '\0';
	if (src == NULL)
		src = "";
	l = strnlen(src, n);
	if (l == n) {
		memcpy(dst, src, n - 1);
		dst[n - 1] = '\0';
		return 1;
	}
	memcpy(dst, src, l + 1);
	return 0;
}

/*
 * names.c - sorted name tables: the classifier's handlers and the
 * unwrapper's wrappers are static arrays of records named by their
 * first member, looked up by binary search over a sorted index built
 * once.
 */
#include <stdlib.h>
#include <string.h>

#include "runner/policy/names.h"

/* qsort order of records by the name that is their first member. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)*(const void *const *)a,
	    *(const char *const *)*(const void *const *)b);
}

/* Sorts a name table's index; see names.h. */
void
pl_names_sort(const void **idx, size_t n)
{
	qsort(idx, n, sizeof(idx[0]), name_cmp);
}

/* Binary search of a sorted name table's index; see names.h. */
const void *
pl_names_find(const void *const *idx, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int r = strcmp(name, *(const char *const *)idx[mid]);

		if (r == 0)
			return idx[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

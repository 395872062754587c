/*
 * names.c - sorted name tables: the classifier's handlers, the
 * unwrapper's wrappers, the options that run commands and the
 * host-changing tools are static arrays of records named by their first
 * member, looked up by binary search over an index built on first use.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runner/policy/names.h"

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

/* qsort order of records by the name that is their first member. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)*(const void *const *)a,
	    *(const char *const *)*(const void *const *)b);
}

/* Builds t's index once; see names.h. */
const void *const *
pl_names_index(struct pl_names *t)
{
	size_t k;

	if (atomic_load_explicit(&t->ready, memory_order_acquire))
		return t->idx;
	pthread_mutex_lock(&names_lock);
	if (!atomic_load_explicit(&t->ready, memory_order_relaxed)) {
		for (k = 0; k < t->n; k++)
			t->idx[k] = (const char *)t->recs + k * t->size;
		qsort(t->idx, t->n, sizeof(t->idx[0]), name_cmp);
		atomic_store_explicit(&t->ready, 1, memory_order_release);
	}
	pthread_mutex_unlock(&names_lock);
	return t->idx;
}

/* Binary search of a name table; see names.h. */
const void *
pl_names_find(struct pl_names *t, const char *name)
{
	const void *const *idx = pl_names_index(t);
	size_t lo = 0, hi = t->n;

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

/* Lower bound of name in a name table's sorted index; see names.h. */
size_t
pl_names_first(struct pl_names *t, const char *name)
{
	const void *const *idx = pl_names_index(t);
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(*(const char *const *)idx[mid], name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && strcmp(*(const char *const *)idx[lo], name) == 0)
		return lo;
	return t->n;
}

/*
 * names.h - what the name tables (names.c) offer the classifier and the
 * unwrapper: an index of pointers to records whose first member is their
 * name (const char *), sorted once, then searched by name.
 */
#ifndef VG_POLICY_NAMES_H
#define VG_POLICY_NAMES_H

#include <stddef.h>

/* Orders idx (n pointers to records) by name. */
void	pl_names_sort(const void **idx, size_t n);
/* The record named name in a sorted idx (borrowed), or NULL. */
const void *pl_names_find(const void *const *idx, size_t n,
	    const char *name);

#endif

/*
 * names.h - what the name tables (names.c) offer the classifier, the
 * unwrapper and the option and host-tool tables: an index of pointers
 * to records whose first member is their name (const char *), built and
 * sorted on first use, then searched by name.
 */
#ifndef VG_POLICY_NAMES_H
#define VG_POLICY_NAMES_H

#include <stdatomic.h>
#include <stddef.h>

/* A static table of records named by their first member. */
struct pl_names {
	const void	*recs;		/* the records */
	size_t		 size;		/* one record's size */
	size_t		 n;		/* how many */
	const void	**idx;		/* n slots for the sorted index */
	atomic_int	 ready;		/* idx is built */
};

/* Initialiser of a struct pl_names over the array recs, with slots (an
 * array of as many const void *) for its index. */
#define PL_NAMES(recs, slots) { (recs), sizeof((recs)[0]), \
	sizeof(recs) / sizeof((recs)[0]), (slots), 0 }

/* The index of t sorted by name, built once (safe from any thread). */
const void *const *pl_names_index(struct pl_names *t);
/* The record named name in t (borrowed), or NULL. */
const void *pl_names_find(struct pl_names *t, const char *name);
/* The index in t's sorted index of the first record named name (tables
 * with several records of one name), or t->n when there is none. */
size_t	pl_names_first(struct pl_names *t, const char *name);

#endif

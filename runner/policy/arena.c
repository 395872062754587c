/*
 * arena.c - the per-command arena: blocks of at least PL_BLOCK bytes,
 * allocation by bumping a pointer, reset by moving the blocks to a spare
 * list.  Allocation failure aborts (vg_xmalloc), so callers never check.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "runner/policy/arena.h"

#define PL_BLOCK	(64 * 1024)

/* Bump allocation, taking a spare block or a new one when full. */
void *
pl_alloc(struct pl_arena *a, size_t n)
{
	struct pl_blk *b = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (b == NULL || b->cap - b->used < n) {
		size_t cap = n > PL_BLOCK ? n : PL_BLOCK;

		if (a->spare != NULL && a->spare->cap >= n) {
			b = a->spare;
			a->spare = b->next;
		} else {
			b = vg_xmalloc(sizeof(*b) + cap);
			b->cap = cap;
		}
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

/* Copies n bytes of s into the arena, NUL-terminated. */
char *
pl_strndup(struct pl_arena *a, const char *s, size_t n)
{
	char *p = pl_alloc(a, n + 1);

	if (n > 0)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Moves every block to the spare list. */
void
pl_arena_reset(struct pl_arena *a)
{
	struct pl_blk *b, *next;

	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		b->used = 0;
		b->next = a->spare;
		a->spare = b;
	}
	a->head = NULL;
}

/* Frees the blocks, used and spare. */
void
pl_arena_release(struct pl_arena *a)
{
	struct pl_blk *b, *next;

	pl_arena_reset(a);
	for (b = a->spare; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	a->spare = NULL;
}

/*
 * arena.h - the per-command arena of the policy gate: everything built
 * while evaluating one command (syntax tree, fields, values, findings)
 * is allocated here and dropped together when the arena is reset, not
 * freed, before the next command, so the hot path makes no malloc calls
 * once the arena has grown to its working size.  An arena belongs to one
 * struct vg_policy and is used by one thread at a time.
 */
#ifndef VG_POLICY_ARENA_H
#define VG_POLICY_ARENA_H

#include <stddef.h>

struct pl_blk {
	struct pl_blk	*next;
	size_t		 cap;
	size_t		 used;
	char		 data[];
};

struct pl_arena {
	struct pl_blk	*head;		/* current block first */
	struct pl_blk	*spare;		/* blocks kept across resets */
};

/* Returns n zeroed bytes that live until the next reset; never NULL. */
void	*pl_alloc(struct pl_arena *a, size_t n);
/* Copies n bytes of s, NUL-terminated, into the arena. */
char	*pl_strndup(struct pl_arena *a, const char *s, size_t n);
/* Drops everything allocated, keeping the blocks for reuse. */
void	 pl_arena_reset(struct pl_arena *a);
/* Frees every block; the arena is empty and reusable afterwards. */
void	 pl_arena_release(struct pl_arena *a);

#endif

/*
 * yaml-tree.h - a YAML document as a small tree of scalars, sequences and
 * mappings, each with its 1-based line and column, built from libyaml's
 * event parser.
 *
 * The tree is the only thing that sees YAML syntax: schema.c decodes it
 * into C structs and never touches libyaml.  Parsing is bounded for
 * hostile input: a maximum size, a maximum nesting depth, and a budget of
 * nodes reachable through aliases, so a "billion laughs" file is rejected
 * after a few thousand steps with a few kilobytes of memory (aliases share
 * the anchored node; they are never copied).  Duplicate mapping keys are
 * reported and the later pair dropped.
 *
 * Scalars keep their text exactly as written; types are decided by the
 * schema, not by YAML 1.1 resolution, so "on", "yes" and "0.10" stay as
 * written.  Only a plain "", "~", "null" (any case) is null.
 */
#ifndef VG_YAML_TREE_H
#define VG_YAML_TREE_H

#include <stddef.h>

#include "runner/manifest/manifest.h"

enum vg_ynode_kind {
	VG_Y_SCALAR,
	VG_Y_SEQ,
	VG_Y_MAP,
};

/* How a scalar was written; positions inside it are exact only when it
 * is on one line (plain or quoted without escapes). */
enum vg_ystyle {
	VG_YS_PLAIN,
	VG_YS_QUOTED,		/* '...' or "..." */
	VG_YS_BLOCK,		/* | or > */
};

struct vg_ynode {
	enum vg_ynode_kind	 kind;
	enum vg_ystyle		 style;		/* scalars */
	int			 line;		/* 1-based; 0 = no place */
	int			 col;
	int			 one_line;	/* scalar text maps 1:1 to columns */
	int			 block_col;	/* '|' block: its lines'
						   column, or 0 */
	char			*str;		/* scalar text, NUL-terminated */
	size_t			 len;		/* scalar length */
	struct vg_ynode		**items;	/* SEQ: n items; MAP: 2n (k, v) */
	size_t			 n;		/* items, or pairs for MAP */
	size_t			 cap;
	size_t			 weight;	/* nodes with aliases expanded */
	int			 done;		/* end event seen */
};

/* A parsed document; every node is owned by the tree. */
struct vg_ytree {
	struct vg_ynode		*root;		/* NULL for an empty document */
	struct vg_ynode		**all;
	size_t			 nall;
	size_t			 capall;
};

struct vg_ylimits {
	size_t	max_bytes;		/* 0 = VG_YAML_MAX_BYTES */
	int	max_depth;		/* 0 = VG_YAML_MAX_DEPTH */
	size_t	max_alias_nodes;	/* 0 = VG_YAML_MAX_ALIAS_NODES */
	size_t	max_nodes;		/* 0 = VG_YAML_MAX_NODES */
	int	no_positions;		/* nodes get line 0 (JSON) */
	int	col_shift;		/* added to columns of line 1: the
					   text starts inside a longer line
					   (--set KEY=VALUE) */
};

#define VG_YAML_MAX_BYTES	(1024 * 1024)
#define VG_YAML_MAX_DEPTH	64
#define VG_YAML_MAX_ALIAS_NODES	10000
#define VG_YAML_MAX_NODES	200000
#define VG_YAML_MAX_ANCHORS	1000

/*
 * Parses len bytes of YAML.  name labels diagnostics ("FILE:LINE:COL:
 * message").  Returns 0 with *tp set (the caller frees it with
 * vg_ytree_free), or VG_EPARSE / VG_ELIMIT with the reason in d and *tp
 * NULL.  Duplicate keys are added to d but do not fail the parse, so that
 * the caller can go on and report the schema's problems too; *dups counts
 * them (may be NULL).  Never blocks.
 */
int	vg_ytree_parse(const char *name, const char *text, size_t len,
	    const struct vg_ylimits *lim, struct vg_ytree **tp, int *dups,
	    struct vg_diag *d);
void	vg_ytree_free(struct vg_ytree *t);

/* Allocates a node owned by t (for trees built in code: --set). */
struct vg_ynode *vg_ytree_node(struct vg_ytree *t, enum vg_ynode_kind kind);
/* Appends child to a sequence, or key (a scalar) and value to a map. */
void	vg_ynode_push(struct vg_ynode *parent, struct vg_ynode *child);
void	vg_ynode_put(struct vg_ynode *map, struct vg_ynode *key,
	    struct vg_ynode *value);

/* True when n is a plain null scalar ("", "~", "null"). */
int	vg_ynode_is_null(const struct vg_ynode *n);
/* Map lookup by key text; NULL when absent or n is not a map. */
const struct vg_ynode *vg_ynode_get(const struct vg_ynode *n,
	    const char *key);
/* "a string", "a list", "a mapping", "empty" - for messages. */
const char *vg_ynode_kind_name(const struct vg_ynode *n);

/*
 * Where offset off of scalar n lies: exact for one-line scalars and
 * literal blocks ('|'), the scalar's own start otherwise.
 */
void	vg_ynode_loc_at(const struct vg_ynode *n, size_t off, const char *file,
	    struct vg_loc *loc);

#endif

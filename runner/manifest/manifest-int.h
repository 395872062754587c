/*
 * manifest-int.h - what manifest.c, config.c and expand.c share and
 * nobody else needs: the top-level field table, the loader's state across
 * configuration layers, and the ${{ ... }} splitter.
 */
#ifndef VG_MANIFEST_INT_H
#define VG_MANIFEST_INT_H

#include "runner/manifest/manifest.h"
#include "runner/manifest/schema.h"
#include "runner/manifest/yaml-tree.h"

/* The top-level table: the manifest's own rows and every linked plugin's
 * sections (built on first use). */
const struct vg_section *vg_manifest_schema(void);

/* The sections of unattended runs (manifest-notify.c). */
extern const struct vg_section vg_concurrency_section;
extern const struct vg_section vg_notify_section;

/* One decoded layer: a config file, the manifest, or one --set. */
struct vg_layer {
	struct vg_ytree	*tree;
	const char	*file;		/* borrowed from m->sources */
};

/* State of one load, across layers (vg_dctx.user). */
struct vg_mload {
	struct vg_manifest	*m;
	struct vg_layer		*layers;
	size_t			 nlayers;
	const struct vg_ynode	*cmd_node;	/* where command was set */
	struct vg_strv		 bad;		/* paths with problems
						   (vg_dctx.bad) */
	int			 cmd_seen;	/* some layer gave command */
	int			 bad_root;	/* manifest is not a mapping */
	const char		*cmd_file;
	int			 session;	/* vg_load_opts.session */
	int			 site_required;	/* the site config requires
						   site_level at least */
	enum vg_isolation_level	 site_level;
	char			*site_net_max;	/* isolation.network_max of
						   the site config */
	struct vg_strv		 site_deny;	/* its network deny-list */
	char			*site_sendmail;	/* the mailer the site
						   config fixes, or NULL */
};

/* The resources section's rows (per task: expand.c decodes its
 * templates). */
extern const struct vg_section vg_resources_section;

/* A new manifest holding every default; the caller frees it. */
struct vg_manifest *vg_manifest_new(void);
/* Copies name into m->sources and returns the copy (borrowed). */
const char *vg_manifest_source(struct vg_manifest *m, const char *name);
/* Decodes a layer's tree onto m; problems go to d. */
void	vg_mload_layer(struct vg_mload *ls, struct vg_ytree *tree,
	    const char *file, int config, struct vg_diag *d);
/*
 * Checks that need every layer: required keys, cross-field rules,
 * substitutions, the task count and the plugins' own checks.  Each runs
 * when the values it reads decoded without problems, so that one load
 * reports every problem and none that only follows from another.
 */
void	vg_mload_finish(struct vg_mload *ls, struct vg_diag *d);
void	vg_mload_release(struct vg_mload *ls);

/*
 * Loads only the configuration layers (site and user config, then
 * opts->sets) onto the built-in defaults, for commands that take their
 * settings from the configuration without a manifest (`vigil cache`,
 * `vigil scratch`).  None of a job's checks apply: no command is needed.
 * On success *mp is owned by the caller; on failure as vg_manifest_load.
 */
int	vg_config_load_defaults(const struct vg_load_opts *opts,
	    struct vg_manifest **mp, struct vg_diag *diag, struct vg_err *e);

/* ${{ ... }} templates. */
enum vg_sub_kind {
	VG_SUB_TEXT,		/* literal text */
	VG_SUB_MATRIX,		/* ${{ matrix.NAME }} */
	VG_SUB_ENV,		/* ${{ env.NAME }} */
	VG_SUB_INDEX,		/* ${{ task.index }} */
	VG_SUB_BAD,		/* a malformed ${{ }}: why says how */
};

/* Where a ${{ }} of a string command sits in its shell syntax. */
enum vg_shctx {
	VG_SHCTX_PLAIN,		/* unquoted: the value is one word */
	VG_SHCTX_DQ,		/* inside "...": \ before $ ` " \ */
	VG_SHCTX_SQ,		/* inside '...': ' as '\'' */
	VG_SHCTX_COMMENT,	/* in a comment: newlines as spaces */
	VG_SHCTX_UNSAFE,	/* no quoting is sure there: refused */
};

struct vg_sub_seg {
	enum vg_sub_kind kind;
	size_t		 off;		/* TEXT: the text; others: NAME */
	size_t		 len;
	size_t		 at;		/* offset of "${{" (or of the text) */
	const char	*why;		/* BAD: a static description */
	enum vg_shctx	 ctx;		/* set by vg_sub_shell */
	const char	*ctx_why;	/* UNSAFE: where, static text */
};

/*
 * Splits template s into segments; the caller frees *segs whatever the
 * result.  A malformed ${{ }} becomes a VG_SUB_BAD segment and splitting
 * goes on after its '}}' (an unterminated one ends the list); then
 * returns VG_EINVAL with *bad the offset of the first and *why its
 * description.
 */
int	vg_sub_split(const char *s, struct vg_sub_seg **segs, size_t *n,
	    size_t *bad, const char **why);

/*
 * Sets ctx (and ctx_why) of every ${{ }} segment of segs, split from the
 * string command s, by following the shell's quoting around it
 * (sub-shell.c).  Never fails: an unsure place is VG_SHCTX_UNSAFE.
 */
void	vg_sub_shell(const char *s, struct vg_sub_seg *segs, size_t n);
/* Appends value v written for context ctx, so that the shell reads it as
 * data (VG_SHCTX_UNSAFE: as VG_SHCTX_PLAIN; the loader refuses it). */
void	vg_sub_shell_value(struct vg_buf *b, enum vg_shctx ctx,
	    const char *v);

/* The largest magnitude of a matrix range's start, stop and step (2^50:
 * their differences cannot overflow a long long). */
#define VG_RANGE_MAX_ABS	(1LL << 50)

/* The most tasks one manifest may expand to. */
#define VG_EXPAND_MAX_TASKS	1000000

/*
 * Walks every task m expands to and reports, once per name, a
 * ${{ matrix.NAME }} some task has no value for, and a task count over
 * the limit.  Returns the number of problems added to d.
 */
int	vg_expand_check(const struct vg_manifest *m, struct vg_diag *d);

#endif

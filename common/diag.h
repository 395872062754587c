/*
 * diag.h - source locations and lists of diagnostics, for everything
 * that reports problems in a file a user wrote (manifests, configs,
 * policy files): "FILE:LINE:COL: message", every problem at once.
 */
#ifndef VG_DIAG_H
#define VG_DIAG_H

#include <stdio.h>

#include "common/buf.h"

/* A position in a manifest or config file (1-based line and column). */
struct vg_loc {
	const char	*file;		/* borrowed from the manifest */
	int		 line;
	int		 col;
};

/*
 * A list of diagnostics: validation reports every problem at once.  Each
 * line is "FILE:LINE:COL: message" (or "FILE: message" without a place);
 * a message may go on with lines of its own ("hint: ...").  The texts of
 * the files they point into may be kept beside them (vg_diag_source), so
 * that vg_diag_print can show the line and a caret under the column.
 */
struct vg_diag {
	struct vg_strv	lines;
	struct vg_strv	src_names;	/* kept sources, by name */
	struct vg_strv	src_texts;
};

#define VG_DIAG_INIT	{ VG_STRV_INIT, VG_STRV_INIT, VG_STRV_INIT }

void	vg_diag_add(struct vg_diag *d, const struct vg_loc *loc,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Keeps a copy of the first len bytes of text (up to a NUL) as the
 * source named name, for excerpts; a name kept already is left alone.
 * d may be NULL.
 */
void	vg_diag_source(struct vg_diag *d, const char *name,
	    const char *text, size_t len);
/*
 * Appends entry i of d to out as a compiler does: "FILE:LINE:COL:
 * error: message", then, when its source is kept, the line (tabs
 * expanded, cut around the column when long) and a '^' under the column,
 * then the message's further lines; every line ends in a newline.
 * Entries with no kept source are appended as they are.
 */
void	vg_diag_render(const struct vg_diag *d, size_t i,
	    struct vg_buf *out);
/* Writes every entry of d to f with vg_diag_render. */
void	vg_diag_print(const struct vg_diag *d, FILE *f);
void	vg_diag_release(struct vg_diag *d);

#endif

/*
 * json.h - JSON for vigil's own output (status --json, audit lines, result
 * records, API request bodies) and for replies from services (Docker Engine
 * API, cloud sandboxes, Slurm --json).
 *
 * Writer (json-write.c): appends to a vg_buf and tracks commas itself, so
 * callers write vg_json_key(w, "id"); vg_json_str(w, id); in any order.
 *
 * Parser (json-parse.c): a bounded DOM for untrusted replies: limits on
 * depth, size and element count are set by the caller; the result is a
 * tree of struct vg_json_value in one arena freed with vg_json_free.
 */
#ifndef VG_JSON_H
#define VG_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

#define VG_JSON_MAX_DEPTH 64

struct vg_json_writer {
	struct vg_buf	*out;
	int		 depth;
	unsigned char	 need_comma[VG_JSON_MAX_DEPTH];
	unsigned char	 after_key;
};

void	vg_json_writer_init(struct vg_json_writer *w, struct vg_buf *out);
void	vg_json_obj_begin(struct vg_json_writer *w);
void	vg_json_obj_end(struct vg_json_writer *w);
void	vg_json_arr_begin(struct vg_json_writer *w);
void	vg_json_arr_end(struct vg_json_writer *w);
void	vg_json_key(struct vg_json_writer *w, const char *key);
/* A NULL string is written as null. */
void	vg_json_str(struct vg_json_writer *w, const char *s);
void	vg_json_strn(struct vg_json_writer *w, const char *s, size_t n);
void	vg_json_int(struct vg_json_writer *w, long long v);
void	vg_json_num(struct vg_json_writer *w, double v);
void	vg_json_bool(struct vg_json_writer *w, int v);
void	vg_json_null(struct vg_json_writer *w);
/* Appends n bytes of s to out as valid UTF-8: each byte that does not
 * start a well-formed sequence becomes U+FFFD (what JSON output of
 * arbitrary bytes needs before vg_json_strn). */
void	vg_json_utf8_clean(struct vg_buf *out, const char *s, size_t n);
/* Appends s as a quoted JSON string with escapes (no comma handling). */
void	vg_json_quote(struct vg_buf *b, const char *s, size_t n);

/* ---- parser ---- */

enum vg_json_type {
	VG_JSON_NULL,
	VG_JSON_BOOL,
	VG_JSON_NUMBER,
	VG_JSON_STRING,
	VG_JSON_ARRAY,
	VG_JSON_OBJECT,
};

struct vg_json_value {
	enum vg_json_type	 type;
	int			 b;		/* BOOL */
	double			 num;		/* NUMBER */
	const char		*str;		/* STRING (NUL-terminated) */
	size_t			 len;		/* STRING length, or element count */
	const char		**keys;		/* OBJECT: keys[i] names items[i] */
	struct vg_json_value	**items;	/* ARRAY and OBJECT */
};

struct vg_json_limits {
	size_t	max_bytes;	/* input size */
	int	max_depth;	/* nesting, <= VG_JSON_MAX_DEPTH */
	size_t	max_values;	/* total values in the document */
};

struct vg_json_doc;

/*
 * Parses len bytes of text; on success *docp owns the tree, reached through
 * vg_json_root.  On failure *docp is NULL and e says where (byte offset)
 * and what was expected.  Limits of NULL mean conservative defaults.
 */
int	vg_json_parse(const char *text, size_t len,
	    const struct vg_json_limits *lim, struct vg_json_doc **docp,
	    struct vg_err *e);
const struct vg_json_value *vg_json_root(const struct vg_json_doc *doc);
void	vg_json_free(struct vg_json_doc *doc);

/* Object member lookup; NULL when absent or v is not an object. */
const struct vg_json_value *vg_json_get(const struct vg_json_value *v,
	    const char *key);
/* Typed accessors returning def when absent or of another type. */
const char *vg_json_get_str(const struct vg_json_value *v, const char *key,
	    const char *def);
double	vg_json_get_num(const struct vg_json_value *v, const char *key,
	    double def);

/* Writes a parsed value back with w, in the writer's own form (so two
 * values compare equal as text when they are equal as JSON, up to the
 * order of object members). */
void	vg_json_value_write(struct vg_json_writer *w,
	    const struct vg_json_value *v);

#endif

/*
 * schema.h - table-driven decoding of YAML trees into C structs.
 *
 * A section is a table of fields: key, type, offset in the struct,
 * default, range or list of valid names, help.  Adding a manifest field is
 * one line in a table (runner/manifest/manifest.c); the decoder, the defaults, the
 * JSON form (vg_manifest_to_json), the did-you-mean for misspelt keys and
 * the release of memory all follow from it.
 *
 * Decoding merges: a mapping decoded onto a struct sets only the keys it
 * names, so configuration layers are decoded one after another onto the
 * same struct (built-in defaults < site < user < manifest < --set).
 * Nested sections and string maps merge key by key; scalars and lists are
 * replaced.  Every problem is added to the diagnostics and decoding goes
 * on, so that one run reports everything.
 */
#ifndef VG_SCHEMA_H
#define VG_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/yaml-tree.h"

enum vg_ftype {
	VG_F_STR,	/* char *; .values (if set) lists the valid ones */
	VG_F_INT,	/* int, range [min, max] */
	VG_F_U64,	/* uint64_t count, range [min, max] */
	VG_F_BOOL,	/* int 0/1: true/false/yes/no/on/off */
	VG_F_FLOAT,	/* double, range [min, max] */
	VG_F_BYTES,	/* uint64_t bytes: 10, 1.5G, 512MiB, 2KB */
	VG_F_DUR,	/* double seconds: 30, 5m, 1h30m, 1-00:00:00 */
	VG_F_DUR_U64,	/* uint64_t whole seconds (rounded up) */
	VG_F_ENUM,	/* int: .values[i] means .ivalues[i] */
	VG_F_FLAGS,	/* unsigned: a list of .values, OR of .ivalues */
	VG_F_STRV,	/* struct vg_strv: a list of scalars */
	VG_F_KVS,	/* struct vg_kvs: a mapping of scalars */
	VG_F_SECTION,	/* a nested struct at off, decoded with .sub */
	VG_F_LIST,	/* .sub structs: pointer at off, size_t count at
			   .off2, element size .size */
	VG_F_CUSTOM,	/* .ops does everything */
};

/* Field flags. */
#define VG_FF_NOCONFIG	0x01	/* manifest only, not in config files */
#define VG_FF_SETFLAG	0x02	/* sets the int at .off2 when given */
#define VG_FF_NOJSON	0x04	/* not part of the effective manifest */
#define VG_FF_CONFIGONLY 0x08	/* config files only, not manifests or
				   --set (the effective JSON keeps it) */

struct vg_field;
struct vg_dctx;

struct vg_field_ops {
	/* Decodes n into the field at p (merging or replacing). */
	void	(*decode)(const struct vg_field *f, const struct vg_ynode *n,
		    void *p, struct vg_dctx *c);
	/* Writes the value at p (the key is already written). */
	void	(*encode)(const struct vg_field *f, const void *p,
		    struct vg_json_writer *w);
	/* Frees what the field at p owns. */
	void	(*release)(const struct vg_field *f, void *p);
};

struct vg_section {
	const char		*name;		/* for messages; "" at top */
	const struct vg_field	*fields;	/* ends with { .key = NULL } */
	size_t			 loc_off;	/* 1 + offsetof a struct vg_loc
						   set to the mapping's place;
						   0 = none */
	/* Cross-field checks after a mapping was decoded.  Optional. */
	void			(*check)(const struct vg_section *s,
				    const struct vg_ynode *n, void *base,
				    struct vg_dctx *c);
	/* A scalar in place of the mapping stands for { scalar_key:
	 * scalar } (a webhook given as its URL); and a VG_F_LIST of this
	 * section takes a single item (a scalar or a mapping) in place of
	 * the list.  NULL: a mapping only. */
	const char		*scalar_key;
	size_t			 tmpl_off;	/* 1 + offsetof a struct vg_kvs:
						   a scalar value holding
						   "${{" is kept there verbatim
						   (key: the field's, loc: the
						   value's) instead of being
						   decoded, for expansion to
						   decode per task; a later
						   layer's plain value drops
						   it.  0 = none */
};

struct vg_field {
	const char		*key;
	enum vg_ftype		 type;
	size_t			 off;
	const char		*def;		/* default, written as in YAML
						   (FLAGS: comma-separated) */
	double			 min;		/* range when min < max */
	double			 max;
	const char *const	*values;	/* NULL-terminated names */
	const int		*ivalues;
	const struct vg_section	*sub;		/* SECTION, LIST */
	size_t			 size;		/* LIST element size */
	size_t			 off2;		/* LIST count; SETFLAG int */
	const struct vg_field_ops *ops;		/* CUSTOM */
	/* Extra validation of a decoded value.  Optional. */
	void			(*check)(const struct vg_field *f,
				    const struct vg_ynode *n, void *p,
				    struct vg_dctx *c);
	const char		*alias;		/* another accepted key */
	unsigned		 flags;		/* VG_FF_* */
	const char		*help;		/* one line, for docs */
};

/* Decoding state: where diagnostics go and how to name things. */
struct vg_dctx {
	struct vg_diag	*d;
	const char	*file;		/* locations point here; borrowed */
	int		 config;	/* a config file: VG_FF_NOCONFIG keys
					   are errors */
	int		 raw;		/* JSON: plain numbers, no units */
	const char	*skip_key;	/* top-level key to ignore, or NULL */
	int		 errors;	/* problems added so far */
	char		 path[512];	/* dotted path of the current value */
	void		*user;		/* for custom decoders */
	struct vg_mlocs	*locs;		/* when set, where every key and list
					   item is written is added here */
	struct vg_strv	*bad;		/* when set, the path of every
					   problem is added here */
};

/* Appends one place to l (vg_dctx.locs, the manifest's root). */
void	vg_mlocs_add(struct vg_mlocs *l, const char *path,
	    const struct vg_loc *key, const struct vg_loc *value);

/* Decodes mapping n onto base (merging); problems go to c->d. */
void	vg_schema_decode(const struct vg_section *s, const struct vg_ynode *n,
	    void *base, struct vg_dctx *c);
/* Decodes one field's value n (used by custom decoders and --set). */
void	vg_schema_decode_field(const struct vg_field *f,
	    const struct vg_ynode *n, void *base, struct vg_dctx *c);
/* Sets every field of s in base to its default (base must be zeroed). */
void	vg_schema_defaults(const struct vg_section *s, void *base);
/* Frees everything the fields of s own in base (not base itself). */
void	vg_schema_release(const struct vg_section *s, void *base);
/* Deep-copies the fields of s from src to dst (dst is overwritten, not
 * released); the templates (tmpl_off) are not copied.  Sections of
 * lists or custom fields are not supported (abort). */
void	vg_schema_copy(const struct vg_section *s, void *dst,
	    const void *src);
/* Writes base as a JSON object with every field. */
void	vg_schema_encode(const struct vg_section *s, const void *base,
	    struct vg_json_writer *w);

/* Reports a problem at node n (or at the file when n has no place). */
void	vg_dctx_error(struct vg_dctx *c, const struct vg_ynode *n,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends ".key" or "[i]" to c->path; returns the old length to pop. */
size_t	vg_dctx_push(struct vg_dctx *c, const char *key);
size_t	vg_dctx_pushi(struct vg_dctx *c, size_t i);
void	vg_dctx_pop(struct vg_dctx *c, size_t len);
/* The value for a message: 'text' (shortened) or "a list". */
const char *vg_dctx_what(const struct vg_ynode *n, char *buf, size_t size);

/*
 * Checks shared by section tables.  vg_schema_check_mounts: every entry
 * of sv (the sequence n) is "SOURCE:/DEST[:ro|rw]", or with dst_required
 * 0 also "SOURCE".  vg_schema_check_printable (a field check): no control
 * characters in a string or a list of strings.
 */
void	vg_schema_check_mounts(const struct vg_ynode *n,
	    const struct vg_strv *sv, struct vg_dctx *c, int dst_required);
void	vg_schema_check_printable(const struct vg_field *f,
	    const struct vg_ynode *n, void *p, struct vg_dctx *c);

/*
 * A scheduler's options mapping (slurm.options, gridengine.options): each
 * entry of kv (the mapping n) is passed to check, which fills why and
 * returns non-zero when it refuses the entry; each refusal is reported
 * at the key's own line and column as "'FIELD.KEY': WHY", with a "did
 * you mean" from allowed (NULL-terminated) when why starts with "not
 * an" (an unknown option).
 */
void	vg_schema_check_options(const struct vg_ynode *n,
	    const struct vg_kvs *kv, const char *field,
	    const char *const *allowed,
	    int (*check)(const char *key, const char *value, char *why,
	    size_t n), struct vg_dctx *c);

/*
 * The name in names[] nearest to s by edit distance (transpositions count
 * one, case is ignored), or NULL when none is close enough to be a
 * plausible typo.
 */
const char *vg_did_you_mean(const char *s, const char *const *names,
	    size_t n);

/* Writes a double so that strtod reads back the same value. */
void	vg_json_exact_num(struct vg_json_writer *w, double v);
/* Writes an unsigned 64-bit integer. */
void	vg_json_u64(struct vg_json_writer *w, uint64_t v);

#endif

/*
 * json-parse.c - a strict RFC 8259 parser for untrusted replies (Docker
 * Engine API, cloud sandbox APIs, Slurm --json).
 *
 * The whole document lives in one arena: values, decoded strings, and the
 * key and item arrays are carved from a chain of blocks freed at once by
 * vg_json_free.  Input is bounded by the caller's limits (bytes, nesting,
 * number of values) checked before any work is done for them, so hostile
 * input costs at most O(max_bytes) memory.
 *
 * Strictness: only the four JSON whitespace bytes, no BOM, no comments, no
 * trailing commas, no leading zeros or '+', no NaN/Infinity, control bytes
 * inside strings rejected, strings must be valid UTF-8 (no overlongs, no
 * encoded surrogates, nothing above U+10FFFF), \uXXXX escapes decoded to
 * UTF-8 with surrogate pairs joined and lone surrogates refused.  A
 * top-level scalar is accepted, as RFC 8259 allows.  Duplicate object keys
 * are kept; vg_json_get returns the first.
 *
 * Errors name the byte offset (0-based) and what was expected there.
 */
#include <locale.h>
#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

/* Defaults when the caller passes no limits: Docker replies are small. */
#define JSON_DEF_MAX_BYTES	(16u << 20)
#define JSON_DEF_MAX_VALUES	(1u << 20)
#define JSON_BLOCK_MIN		4096

struct json_block {
	struct json_block	*next;
	size_t			 used;
	size_t			 size;
	alignas(max_align_t) unsigned char data[];
};

struct vg_json_doc {
	struct json_block	*blocks;
	struct vg_json_value	*root;
	size_t			 first;	/* the first block's size */
};

/* A parsed child waiting for its container to close. */
struct json_slot {
	struct vg_json_value	*v;
	const char		*key;		/* objects only */
};

/* Parser state; the child stack holds items of every open container. */
struct json_parser {
	const unsigned char	*p;		/* next byte */
	const unsigned char	*end;
	const unsigned char	*start;
	struct vg_json_doc	*doc;
	struct vg_json_limits	 lim;
	size_t			 nvalues;
	int			 depth;
	struct json_slot	*stack;		/* pending children */
	size_t			 nstack;
	size_t			 capstack;
	struct vg_err		*e;
};

/* Returns n bytes from the arena, aligned for any type. */
static void *
arena_alloc(struct vg_json_doc *doc, size_t n)
{
	struct json_block *b = doc->blocks;
	size_t align = alignof(max_align_t), size;
	void *ret;

	n = (n + align - 1) & ~(align - 1);
	if (n == 0)
		n = align;
	if (b == NULL || b->size - b->used < n) {
		size = b == NULL ? doc->first : JSON_BLOCK_MIN;
		if (b != NULL && b->size < (1u << 20))
			size = b->size * 2;
		if (size < n)
			size = n;
		b = vg_xmalloc(sizeof(*b) + size);
		b->used = 0;
		b->size = size;
		b->next = doc->blocks;
		doc->blocks = b;
	}
	ret = b->data + b->used;
	b->used += n;
	return ret;
}

/* Records a parse error at the current position. */
static int
json_fail(struct json_parser *jp, const unsigned char *at, const char *what)
{
	if (at == jp->end)
		return vg_err_set(jp->e, VG_EPARSE,
		    "json: byte %zu: unexpected end of input, %s",
		    (size_t)(at - jp->start), what);
	return vg_err_set(jp->e, VG_EPARSE, "json: byte %zu: %s",
	    (size_t)(at - jp->start), what);
}

/* Skips the four whitespace bytes RFC 8259 allows. */
static void
skip_ws(struct json_parser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
	    *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

/* Allocates a value, enforcing the value-count limit. */
static struct vg_json_value *
new_value(struct json_parser *jp, enum vg_json_type type)
{
	struct vg_json_value *v;

	if (jp->nvalues >= jp->lim.max_values) {
		vg_err_set(jp->e, VG_ELIMIT,
		    "json: byte %zu: more than %zu values",
		    (size_t)(jp->p - jp->start), jp->lim.max_values);
		return NULL;
	}
	jp->nvalues++;
	v = arena_alloc(jp->doc, sizeof(*v));
	memset(v, 0, sizeof(*v));
	v->type = type;
	return v;
}

/* Pushes a child (and its key, for objects) onto the pending stack. */
static void
stack_push(struct json_parser *jp, struct vg_json_value *v, const char *key)
{
	jp->stack = vg_xgrow(jp->stack, &jp->capstack, jp->nstack + 1,
	    sizeof(*jp->stack));
	jp->stack[jp->nstack].v = v;
	jp->stack[jp->nstack].key = key;
	jp->nstack++;
}

/* Moves the top n pending children into the arena as v's items. */
static void
stack_pop_into(struct json_parser *jp, struct vg_json_value *v, size_t base,
    int with_keys)
{
	size_t n = jp->nstack - base, i;

	v->len = n;
	if (n > 0) {
		v->items = arena_alloc(jp->doc, n * sizeof(*v->items));
		if (with_keys)
			v->keys = arena_alloc(jp->doc, n * sizeof(*v->keys));
		for (i = 0; i < n; i++) {
			v->items[i] = jp->stack[base + i].v;
			if (with_keys)
				v->keys[i] = jp->stack[base + i].key;
		}
	}
	jp->nstack = base;
}

/* Reads the four hex digits after "\u" at p; -1 when malformed. */
static long
read_hex4(const unsigned char *p, const unsigned char *end)
{
	long v = 0;
	int i, h;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((h = vg_hexval(p[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* Appends code point cp as UTF-8 at out; returns the bytes written. */
static size_t
put_utf8(unsigned char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * Length of the well-formed UTF-8 sequence at p (RFC 3629 table 3-7), or 0
 * when it is malformed, overlong, a surrogate or above U+10FFFF.
 */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
 * Parses the string starting at the opening quote; *out gets a
 * NUL-terminated arena copy and *lenp its length.  The decoded form is
 * never longer than the source, which bounds the copy.
 */
static int
parse_string(struct json_parser *jp, const char **out, size_t *lenp)
{
	const unsigned char *p = jp->p + 1, *q;
	unsigned char *dst, *d;
	long cp, lo;
	size_t n;

	/* Find the closing quote first to size the copy. */
	for (q = p; q < jp->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < jp->end)
			q++;
	if (q >= jp->end)
		return json_fail(jp, jp->end, "unterminated string");
	d = dst = arena_alloc(jp->doc, (size_t)(q - p) + 1);
	while (p < q) {
		if (*p < 0x20)
			return json_fail(jp, p, "control character in string "
			    "(escape it as \\u00XX)");
		if (*p >= 0x80) {
			if ((n = utf8_len(p, q)) == 0)
				return json_fail(jp, p,
				    "invalid UTF-8 in string");
			memcpy(d, p, n);
			d += n;
			p += n;
			continue;
		}
		if (*p != '\\') {
			*d++ = *p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"':	*d++ = '"'; break;
		case '\\':	*d++ = '\\'; break;
		case '/':	*d++ = '/'; break;
		case 'b':	*d++ = '\b'; break;
		case 'f':	*d++ = '\f'; break;
		case 'n':	*d++ = '\n'; break;
		case 'r':	*d++ = '\r'; break;
		case 't':	*d++ = '\t'; break;
		case 'u':
			if ((cp = read_hex4(p + 1, q)) < 0)
				return json_fail(jp, p - 1, "\\u must be "
				    "followed by four hex digits");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return json_fail(jp, p - 1, "unpaired low "
				    "surrogate in \\u escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (q - (p + 5) < 6 || p[5] != '\\' ||
				    p[6] != 'u' ||
				    (lo = read_hex4(p + 7, q)) < 0xdc00 ||
				    lo > 0xdfff)
					return json_fail(jp, p - 1, "high "
					    "surrogate not followed by a "
					    "\\u low surrogate");
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				p += 6;
			}
			/* 6 source bytes per escape >= 4 UTF-8 bytes. */
			d += put_utf8(d, (unsigned long)cp);
			p += 4;
			break;
		default:
			return json_fail(jp, p - 1, "invalid escape (valid: "
			    "\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
		}
		p++;
	}
	*d = '\0';
	*out = (const char *)dst;
	*lenp = (size_t)(d - dst);
	jp->p = q + 1;
	return 0;
}

/*
 * Parses a number per the RFC grammar, then converts it with strtod in a
 * NUL-terminated copy (the input need not be terminated).  The decimal
 * point is swapped for the locale's so a setlocale() elsewhere cannot
 * change the value.
 */
static int
parse_number(struct json_parser *jp, double *out)
{
	const unsigned char *s = jp->p, *p = jp->p;
	char small[128], *tmp, *end, *dot;
	const char *dp;
	size_t n;

	if (p < jp->end && *p == '-')
		p++;
	if (p >= jp->end || *p < '0' || *p > '9')
		return json_fail(jp, p, "expected a digit");
	if (*p == '0') {
		p++;
		if (p < jp->end && *p >= '0' && *p <= '9')
			return json_fail(jp, p, "leading zero in number");
	} else
		while (p < jp->end && *p >= '0' && *p <= '9')
			p++;
	if (p < jp->end && *p == '.') {
		p++;
		if (p >= jp->end || *p < '0' || *p > '9')
			return json_fail(jp, p, "expected a digit after '.'");
		while (p < jp->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < jp->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < jp->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= jp->end || *p < '0' || *p > '9')
			return json_fail(jp, p, "expected a digit in exponent");
		while (p < jp->end && *p >= '0' && *p <= '9')
			p++;
	}
	n = (size_t)(p - s);
	tmp = n < sizeof(small) ? small : vg_xmalloc(n + 1);
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	dp = localeconv()->decimal_point;
	if (dp != NULL && dp[0] != '.' && dp[0] != '\0' && dp[1] == '\0' &&
	    (dot = strchr(tmp, '.')) != NULL)
		*dot = dp[0];
	*out = strtod(tmp, &end);
	if (tmp != small)
		free(tmp);
	/* RFC 8259 section 6 lets us bound the range; an infinity would
	 * make every later (int) conversion undefined.  Underflow gives 0. */
	if (isinf(*out))
		return json_fail(jp, s, "number out of range of a double");
	jp->p = p;
	return 0;
}

/* Matches a literal word (true, false, null). */
static int
parse_word(struct json_parser *jp, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n) != 0)
		return json_fail(jp, jp->p, "expected a value (object, array, "
		    "string, number, true, false or null)");
	jp->p += n;
	return 0;
}

static int parse_value(struct json_parser *, struct vg_json_value **);

/* Parses an array or object; jp->p is at the opening bracket. */
static int
parse_container(struct json_parser *jp, struct vg_json_value *v)
{
	int is_obj = v->type == VG_JSON_OBJECT;
	char close = is_obj ? '}' : ']';
	size_t base = jp->nstack, klen;
	struct vg_json_value *child;
	const char *key = NULL;
	int r;

	if (jp->depth >= jp->lim.max_depth)
		return vg_err_set(jp->e, VG_ELIMIT,
		    "json: byte %zu: nesting deeper than %d",
		    (size_t)(jp->p - jp->start), jp->lim.max_depth);
	jp->depth++;
	jp->p++;
	skip_ws(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		goto done;
	}
	for (;;) {
		if (is_obj) {
			skip_ws(jp);
			if (jp->p >= jp->end || *jp->p != '"')
				return json_fail(jp, jp->p,
				    "expected a string key");
			if ((r = parse_string(jp, &key, &klen)) != 0)
				return r;
			skip_ws(jp);
			if (jp->p >= jp->end || *jp->p != ':')
				return json_fail(jp, jp->p,
				    "expected ':' after object key");
			jp->p++;
		}
		if ((r = parse_value(jp, &child)) != 0)
			return r;
		stack_push(jp, child, key);
		skip_ws(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			break;
		}
		return json_fail(jp, jp->p, is_obj ?
		    "expected ',' or '}' after object member" :
		    "expected ',' or ']' after array element");
	}
done:
	stack_pop_into(jp, v, base, is_obj);
	jp->depth--;
	return 0;
}

/* Parses one value with surrounding whitespace into *vp. */
static int
parse_value(struct json_parser *jp, struct vg_json_value **vp)
{
	struct vg_json_value *v;
	enum vg_json_type type;
	int r;

	skip_ws(jp);
	if (jp->p >= jp->end)
		return json_fail(jp, jp->p, "expected a value");
	switch (*jp->p) {
	case '{':	type = VG_JSON_OBJECT; break;
	case '[':	type = VG_JSON_ARRAY; break;
	case '"':	type = VG_JSON_STRING; break;
	case 't':
	case 'f':	type = VG_JSON_BOOL; break;
	case 'n':	type = VG_JSON_NULL; break;
	default:	type = VG_JSON_NUMBER; break;
	}
	if (type == VG_JSON_NUMBER && *jp->p != '-' &&
	    (*jp->p < '0' || *jp->p > '9'))
		return json_fail(jp, jp->p, "expected a value (object, array, "
		    "string, number, true, false or null)");
	if ((v = new_value(jp, type)) == NULL)
		return VG_ELIMIT;
	switch (type) {
	case VG_JSON_OBJECT:
	case VG_JSON_ARRAY:
		r = parse_container(jp, v);
		break;
	case VG_JSON_STRING:
		r = parse_string(jp, &v->str, &v->len);
		break;
	case VG_JSON_BOOL:
		v->b = *jp->p == 't';
		r = parse_word(jp, v->b ? "true" : "false");
		break;
	case VG_JSON_NULL:
		r = parse_word(jp, "null");
		break;
	default:
		r = parse_number(jp, &v->num);
		break;
	}
	if (r != 0)
		return r;
	*vp = v;
	return 0;
}

/* Parses a whole document; see json.h. */
int
vg_json_parse(const char *text, size_t len, const struct vg_json_limits *lim,
    struct vg_json_doc **docp, struct vg_err *e)
{
	struct json_parser jp;
	struct vg_json_doc *doc;
	int r;

	*docp = NULL;
	memset(&jp, 0, sizeof(jp));
	jp.lim.max_bytes = JSON_DEF_MAX_BYTES;
	jp.lim.max_depth = VG_JSON_MAX_DEPTH;
	jp.lim.max_values = JSON_DEF_MAX_VALUES;
	if (lim != NULL) {
		if (lim->max_bytes > 0)
			jp.lim.max_bytes = lim->max_bytes;
		if (lim->max_depth > 0 && lim->max_depth < VG_JSON_MAX_DEPTH)
			jp.lim.max_depth = lim->max_depth;
		if (lim->max_values > 0)
			jp.lim.max_values = lim->max_values;
	}
	if (len > jp.lim.max_bytes)
		return vg_err_set(e, VG_ELIMIT,
		    "json: document of %zu bytes is over the limit of %zu",
		    len, jp.lim.max_bytes);
	if (text == NULL && len > 0)
		return vg_err_set(e, VG_EINVAL, "json: no input");
	jp.start = jp.p = (const unsigned char *)(text != NULL ? text : "");
	jp.end = jp.start + len;
	jp.e = e;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		return json_fail(&jp, jp.p,
		    "byte order mark is not allowed in JSON");
	doc = vg_xcalloc(1, sizeof(*doc));
	/* A small document gets a block its size can fill (a report holds
	 * one per task), a larger one JSON_BLOCK_MIN and doubling. */
	doc->first = len < (JSON_BLOCK_MIN - 256) / 4 ? 4 * len + 256 :
	    JSON_BLOCK_MIN;
	jp.doc = doc;
	r = parse_value(&jp, &doc->root);
	if (r == 0) {
		skip_ws(&jp);
		if (jp.p != jp.end)
			r = json_fail(&jp, jp.p,
			    "unexpected data after the JSON value");
	}
	free(jp.stack);
	if (r != 0) {
		vg_json_free(doc);
		return r;
	}
	*docp = doc;
	return 0;
}

/* The root value of doc, borrowed from it. */
const struct vg_json_value *
vg_json_root(const struct vg_json_doc *doc)
{
	return doc != NULL ? doc->root : NULL;
}

/* Frees every block of the arena, and doc; accepts NULL. */
void
vg_json_free(struct vg_json_doc *doc)
{
	struct json_block *b, *next;

	if (doc == NULL)
		return;
	for (b = doc->blocks; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	free(doc);
}

/* First member named key of object v, borrowed; NULL when absent. */
const struct vg_json_value *
vg_json_get(const struct vg_json_value *v, const char *key)
{
	size_t i;

	if (v == NULL || v->type != VG_JSON_OBJECT || key == NULL)
		return NULL;
	for (i = 0; i < v->len; i++)
		if (strcmp(v->keys[i], key) == 0)
			return v->items[i];
	return NULL;
}

/* String member key of v, or def. */
const char *
vg_json_get_str(const struct vg_json_value *v, const char *key,
    const char *def)
{
	const struct vg_json_value *m = vg_json_get(v, key);

	return m != NULL && m->type == VG_JSON_STRING ? m->str : def;
}

/* Number member key of v, or def. */
double
vg_json_get_num(const struct vg_json_value *v, const char *key, double def)
{
	const struct vg_json_value *m = vg_json_get(v, key);

	return m != NULL && m->type == VG_JSON_NUMBER ? m->num : def;
}

/*
 * schema.c - the generic half of manifest decoding: field tables applied
 * to YAML trees, defaults, JSON encoding and release, plus the unit
 * parsers (sizes, durations) and string maps declared in
 * manifest.h.  What the fields are is manifest.c's business.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runner/manifest/schema.h"

/* ---- string maps ---- */

/* Index of key in kvs, or -1. */
static long
kvs_find(const struct vg_kvs *kvs, const char *key)
{
	size_t i;

	for (i = 0; i < kvs->n; i++)
		if (strcmp(kvs->v[i].key, key) == 0)
			return (long)i;
	return -1;
}

void
vg_kvs_set(struct vg_kvs *kvs, const char *key, const char *value)
{
	long i = kvs_find(kvs, key);

	if (i >= 0) {
		free(kvs->v[i].value);
		kvs->v[i].value = vg_xstrdup(value);
		return;
	}
	kvs->v = vg_xgrow(kvs->v, &kvs->cap, kvs->n + 1, sizeof(*kvs->v));
	memset(&kvs->v[kvs->n], 0, sizeof(kvs->v[kvs->n]));
	kvs->v[kvs->n].key = vg_xstrdup(key);
	kvs->v[kvs->n].value = vg_xstrdup(value);
	kvs->n++;
}

const char *
vg_kvs_get(const struct vg_kvs *kvs, const char *key)
{
	long i = kvs_find(kvs, key);

	return i >= 0 ? kvs->v[i].value : NULL;
}

/* Removes key from kvs, keeping the order of the rest. */
static void
kvs_del(struct vg_kvs *kvs, const char *key)
{
	long i = kvs_find(kvs, key);

	if (i < 0)
		return;
	free(kvs->v[i].key);
	free(kvs->v[i].value);
	memmove(&kvs->v[i], &kvs->v[i + 1],
	    (kvs->n - (size_t)i - 1) * sizeof(*kvs->v));
	kvs->n--;
}

void
vg_kvs_release(struct vg_kvs *kvs)
{
	size_t i;

	if (kvs == NULL)
		return;
	for (i = 0; i < kvs->n; i++) {
		free(kvs->v[i].key);
		free(kvs->v[i].value);
	}
	free(kvs->v);
	kvs->v = NULL;
	kvs->n = kvs->cap = 0;
}

/* ---- units ---- */

/* Reads digits[.digits] (no sign, no exponent); NULL when none. */
static const char *
read_decimal(const char *s, long double *out)
{
	long double v = 0, scale = 1;
	int digits = 0;

	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			scale /= 10;
			v += (*s++ - '0') * scale;
			digits++;
		}
	}
	if (digits == 0)
		return NULL;
	*out = v;
	return s;
}

int
vg_parse_bytes(const char *s, uint64_t *out)
{
	static const struct {
		const char	*unit;
		uint64_t	 mult;
	} units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1ULL << 10 }, { "kib", 1ULL << 10 }, { "kb", 1000ULL },
		{ "m", 1ULL << 20 }, { "mib", 1ULL << 20 }, { "mb", 1000000ULL },
		{ "g", 1ULL << 30 }, { "gib", 1ULL << 30 },
		{ "gb", 1000000000ULL },
		{ "t", 1ULL << 40 }, { "tib", 1ULL << 40 },
		{ "tb", 1000000000000ULL },
		{ "p", 1ULL << 50 }, { "pib", 1ULL << 50 },
		{ "pb", 1000000000000000ULL },
	};
	/* Integer arithmetic throughout: exact up to UINT64_MAX. */
	unsigned __int128 whole = 0, frac = 0, scale = 1, v;
	const char *p = s;
	size_t i;
	int digits = 0;

	if (s == NULL)
		return VG_EINVAL;
	for (; isdigit((unsigned char)*p); p++, digits++) {
		whole = whole * 10 + (unsigned)(*p - '0');
		if (whole > UINT64_MAX)
			return VG_EINVAL;
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits++) {
			if (scale < 1000000000000000000ULL) {
				frac = frac * 10 + (unsigned)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (digits == 0)
		return VG_EINVAL;
	while (*p == ' ')
		p++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(p, units[i].unit) != 0)
			continue;
		v = whole * units[i].mult +
		    (frac * units[i].mult + scale / 2) / scale;
		if (v > UINT64_MAX)
			return VG_EINVAL;
		*out = (uint64_t)v;
		return 0;
	}
	return VG_EINVAL;
}

/* "D-HH[:MM[:SS]]", "HH:MM:SS", "MM:SS" (Slurm's --time forms). */
static int
parse_clock(const char *s, double *out)
{
	unsigned long long part[3];
	unsigned long long days = 0;
	const char *p = s;
	char *end;
	int n = 0, has_days = 0;

	if (strchr(s, '-') != NULL) {
		if (!isdigit((unsigned char)*p))
			return VG_EINVAL;
		errno = 0;
		days = strtoull(p, &end, 10);
		if (errno != 0 || *end != '-' || days > 100000)
			return VG_EINVAL;
		p = end + 1;
		has_days = 1;
	}
	for (;;) {
		if (!isdigit((unsigned char)*p) || n == 3)
			return VG_EINVAL;
		errno = 0;
		part[n++] = strtoull(p, &end, 10);
		if (errno != 0 || part[n - 1] > 1000000000ULL)
			return VG_EINVAL;
		p = end;
		if (*p == '\0')
			break;
		if (*p++ != ':')
			return VG_EINVAL;
	}
	if (has_days) {
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		while (n < 3)
			part[n++] = 0;
		if (part[0] > 23 || part[1] > 59 || part[2] > 59)
			return VG_EINVAL;
		*out = (double)days * 86400 + (double)part[0] * 3600 +
		    (double)part[1] * 60 + (double)part[2];
		return 0;
	}
	if (n == 2) {
		if (part[1] > 59)
			return VG_EINVAL;
		*out = (double)part[0] * 60 + (double)part[1];
		return 0;
	}
	if (n == 3) {
		if (part[1] > 59 || part[2] > 59)
			return VG_EINVAL;
		*out = (double)part[0] * 3600 + (double)part[1] * 60 +
		    (double)part[2];
		return 0;
	}
	return VG_EINVAL;
}

int
vg_parse_duration(const char *s, double *out)
{
	static const struct {
		const char	*unit;
		double		 secs;
	} units[] = {
		{ "w", 604800 }, { "d", 86400 }, { "h", 3600 }, { "m", 60 },
		{ "s", 1 }, { "ms", 0.001 },
	};
	size_t nunits = sizeof(units) / sizeof(units[0]);
	size_t i, next = 0, ulen;
	long double v, total = 0;
	const char *p = s;

	if (s == NULL || *s == '\0')
		return VG_EINVAL;
	if (strchr(s, ':') != NULL || strchr(s, '-') != NULL)
		return parse_clock(s, out);
	while (*p != '\0') {
		if ((p = read_decimal(p, &v)) == NULL)
			return VG_EINVAL;
		if (*p == '\0') {
			/* A bare number is seconds, and only alone. */
			if (p != s + strspn(s, "0123456789."))
				return VG_EINVAL;
			total += v;
			break;
		}
		ulen = strspn(p, "abcdefghijklmnopqrstuvwxyz");
		for (i = next; i < nunits; i++)
			if (strlen(units[i].unit) == ulen &&
			    strncmp(p, units[i].unit, ulen) == 0)
				break;
		if (i == nunits)
			return VG_EINVAL;	/* unknown or out of order */
		total += v * units[i].secs;
		next = i + 1;
		p += ulen;
	}
	if (total > 1e15L)
		return VG_EINVAL;
	*out = (double)total;
	return 0;
}

/* ---- did you mean ---- */

/* Edit distance with adjacent transpositions, ignoring case. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, cost, v;
	size_t *d;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	d = vg_xcalloc((la + 1) * (lb + 1), sizeof(*d));
#define D(x, y) d[(x) * (lb + 1) + (y)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			cost = tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1]);
			v = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < v)
				v = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	}
	v = D(la, lb);
#undef D
	free(d);
	return v;
}

const char *
vg_did_you_mean(const char *s, const char *const *names, size_t n)
{
	size_t i, dist, best = SIZE_MAX, len = strlen(s), limit;
	const char *pick = NULL;

	/* Allow one edit in short words, two from 5 letters, three from 9. */
	limit = len < 5 ? 1 : len < 9 ? 2 : 3;
	for (i = 0; i < n; i++) {
		dist = edit_distance(s, names[i]);
		if (dist < best) {
			best = dist;
			pick = names[i];
		}
	}
	return best <= limit ? pick : NULL;
}

/* ---- decoding context ---- */

size_t
vg_dctx_push(struct vg_dctx *c, const char *key)
{
	size_t len = strlen(c->path);

	snprintf(c->path + len, sizeof(c->path) - len, "%s%s",
	    len ? "." : "", key);
	return len;
}

size_t
vg_dctx_pushi(struct vg_dctx *c, size_t i)
{
	size_t len = strlen(c->path);

	snprintf(c->path + len, sizeof(c->path) - len, "[%zu]", i);
	return len;
}

void
vg_dctx_pop(struct vg_dctx *c, size_t len)
{
	c->path[len] = '\0';
}

void
vg_dctx_error(struct vg_dctx *c, const struct vg_ynode *n, const char *fmt,
    ...)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_loc loc = { c->file, 0, 0 };
	va_list ap;

	c->errors++;
	if (c->bad != NULL)
		vg_strv_push(c->bad, c->path);
	if (c->d == NULL)
		return;
	if (n != NULL) {
		loc.line = n->line;
		loc.col = n->col;
	}
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_diag_add(c->d, &loc, "%s", vg_buf_str(&b));
	vg_buf_release(&b);
}

const char *
vg_dctx_what(const struct vg_ynode *n, char *buf, size_t size)
{
	size_t i, o = 0, max = 40;

	if (vg_ynode_is_null(n) || n->kind != VG_Y_SCALAR)
		return vg_ynode_kind_name(n);
	if (size < max + 8)
		return "a string";
	buf[o++] = '\'';
	for (i = 0; i < n->len && i < max; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		buf[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (n->len > max) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

/* Reports that the value at c->path is not what f expects. */
static void
type_error(struct vg_dctx *c, const struct vg_ynode *n, const char *want)
{
	char buf[64];

	vg_dctx_error(c, n, "'%s' must be %s, not %s", c->path, want,
	    vg_dctx_what(n, buf, sizeof(buf)));
}

/* The text of a scalar, or NULL after reporting what was wanted. */
static const char *
scalar(struct vg_dctx *c, const struct vg_ynode *n, const char *want)
{
	if (n == NULL || n->kind != VG_Y_SCALAR || vg_ynode_is_null(n)) {
		type_error(c, n, want);
		return NULL;
	}
	if (strlen(n->str) != n->len) {
		vg_dctx_error(c, n, "'%s' must not contain NUL bytes",
		    c->path);
		return NULL;
	}
	return n->str;
}

/* Appends the names of f's valid values, comma-separated. */
static void
values_list(const char *const *values, struct vg_buf *b)
{
	size_t i;

	for (i = 0; values[i] != NULL; i++)
		vg_buf_printf(b, "%s%s", i ? ", " : "", values[i]);
}

static size_t
values_count(const char *const *values)
{
	size_t n = 0;

	while (values[n] != NULL)
		n++;
	return n;
}

/* Index of s in values, or -1 after reporting the valid ones. */
static int
pick_value(struct vg_dctx *c, const struct vg_ynode *n,
    const char *const *values, const char *s)
{
	struct vg_buf b = VG_BUF_INIT;
	const char *near;
	char buf[64];
	int i;

	for (i = 0; values[i] != NULL; i++)
		if (strcmp(values[i], s) == 0)
			return i;
	values_list(values, &b);
	near = vg_did_you_mean(s, values, values_count(values));
	if (near != NULL)
		vg_dctx_error(c, n, "'%s' must be one of %s, not %s; did you "
		    "mean '%s'?", c->path, vg_buf_str(&b),
		    vg_dctx_what(n, buf, sizeof(buf)), near);
	else
		vg_dctx_error(c, n, "'%s' must be one of %s, not %s", c->path,
		    vg_buf_str(&b), vg_dctx_what(n, buf, sizeof(buf)));
	vg_buf_release(&b);
	return -1;
}

/* Checks v against f's range; reports with unit "" or " seconds". */
static int
in_range(const struct vg_field *f, struct vg_dctx *c,
    const struct vg_ynode *n, double v, const char *unit)
{
	/* The JSON form holds unset fields as 0, outside some ranges. */
	if (c->raw || !(f->min < f->max) || (v >= f->min && v <= f->max))
		return 1;
	vg_dctx_error(c, n, "'%s' must be between %.15g and %.15g%s, not %s",
	    c->path, f->min, f->max, unit, n->str);
	return 0;
}

/* Strict decimal integer (optional sign); 0 or VG_EINVAL. */
static int
parse_ll(const char *s, long long *out)
{
	char *end;

	if (*s == '\0' || isspace((unsigned char)*s))
		return VG_EINVAL;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return VG_EINVAL;
	return 0;
}

static int
parse_ull(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return VG_EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return VG_EINVAL;
	*out = v;
	return 0;
}

/* A finite decimal number: [+-]digits[.digits][e[+-]digits]. */
static int
parse_num(const char *s, double *out)
{
	const char *p = s;
	char *end;
	double v;

	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '.' &&
	    isdigit((unsigned char)p[1])))
		return VG_EINVAL;
	if (strpbrk(s, "xXnNiI") != NULL)	/* hex, nan, inf */
		return VG_EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v))
		return VG_EINVAL;
	*out = v;
	return 0;
}

static int
parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	size_t i;

	for (i = 0; i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return VG_EINVAL;
}

#define DUR_WANT "a duration such as 90, 30s, 5m, 1h30m, 2d or 1-00:00:00"
#define BYTES_WANT "a size such as 512M, 4G, 1.5GiB or 2000MB"

/* Decodes a duration in seconds (raw: a plain number). */
static int
dur_value(struct vg_dctx *c, const struct vg_ynode *n, double *out)
{
	const char *s = scalar(c, n, DUR_WANT);

	if (s == NULL)
		return -1;
	if ((c->raw ? parse_num(s, out) : vg_parse_duration(s, out)) != 0 ||
	    *out < 0) {
		type_error(c, n, DUR_WANT);
		return -1;
	}
	return 0;
}

void
vg_mlocs_add(struct vg_mlocs *l, const char *path, const struct vg_loc *key,
    const struct vg_loc *value)
{
	l->v = vg_xgrow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = (struct vg_mloc){ vg_xstrdup(path), *key, *value };
}

/* Notes where the value at c->path (key k, value v) is written. */
static void
loc_record(struct vg_dctx *c, const struct vg_ynode *k,
    const struct vg_ynode *v)
{
	struct vg_loc kl = { c->file, k->line, k->col }, vl = kl;

	if (c->locs == NULL || k->line == 0)
		return;
	/* An empty value ("ssh:") is placed at its key. */
	if (v->line > 0 && !(v->kind == VG_Y_SCALAR && v->len == 0))
		vl = (struct vg_loc){ c->file, v->line, v->col };
	vg_mlocs_add(c->locs, c->path, &kl, &vl);
}

static void strv_decode(const struct vg_field *f, const struct vg_ynode *n,
    struct vg_strv *sv, struct vg_dctx *c);
static void kvs_decode(const struct vg_field *f, const struct vg_ynode *n,
    struct vg_kvs *kvs, struct vg_dctx *c);
static void list_decode(const struct vg_field *f, const struct vg_ynode *n,
    void *base, struct vg_dctx *c);
static void field_release(const struct vg_field *f, void *base);

void
vg_schema_decode_field(const struct vg_field *f, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	void *p = (char *)base + f->off;
	const char *s;
	long long ll;
	uint64_t u;
	double dv;
	int i, before = c->errors;
	size_t k;
	unsigned bits;

	if ((f->flags & VG_FF_SETFLAG) && vg_ynode_is_null(n)) {
		/* null: not set (how the JSON form writes an unset value) */
		field_release(f, base);
		memset(p, 0, f->type == VG_F_INT || f->type == VG_F_BOOL ?
		    sizeof(int) : sizeof(uint64_t));
		*(int *)((char *)base + f->off2) = 0;
		return;
	}
	switch (f->type) {
	case VG_F_STR:
		if (vg_ynode_is_null(n)) {
			free(*(char **)p);
			*(char **)p = vg_xstrdup(f->def);
			break;
		}
		if ((s = scalar(c, n, "a string")) == NULL)
			break;
		if (f->values != NULL && pick_value(c, n, f->values, s) < 0)
			break;
		free(*(char **)p);
		*(char **)p = vg_xstrdup(s);
		break;
	case VG_F_INT:
		if ((s = scalar(c, n, "a whole number")) == NULL)
			break;
		if (parse_ll(s, &ll) != 0 || ll < INT_MIN || ll > INT_MAX) {
			type_error(c, n, "a whole number");
			break;
		}
		if (in_range(f, c, n, (double)ll, ""))
			*(int *)p = (int)ll;
		break;
	case VG_F_U64:
		if ((s = scalar(c, n, "a whole number")) == NULL)
			break;
		if (parse_ull(s, &u) != 0) {
			type_error(c, n, "a whole number");
			break;
		}
		if (in_range(f, c, n, (double)u, ""))
			*(uint64_t *)p = u;
		break;
	case VG_F_BOOL:
		if ((s = scalar(c, n, "true or false")) == NULL)
			break;
		if (parse_bool(s, &i) != 0) {
			type_error(c, n, "true or false");
			break;
		}
		*(int *)p = i;
		break;
	case VG_F_FLOAT:
		if ((s = scalar(c, n, "a number")) == NULL)
			break;
		if (parse_num(s, &dv) != 0) {
			type_error(c, n, "a number");
			break;
		}
		if (in_range(f, c, n, dv, ""))
			*(double *)p = dv;
		break;
	case VG_F_BYTES:
		if ((s = scalar(c, n, BYTES_WANT)) == NULL)
			break;
		if ((c->raw ? parse_ull(s, &u) : vg_parse_bytes(s, &u)) != 0) {
			type_error(c, n, BYTES_WANT);
			break;
		}
		if (in_range(f, c, n, (double)u, " bytes"))
			*(uint64_t *)p = u;
		break;
	case VG_F_DUR:
		if (dur_value(c, n, &dv) != 0)
			break;
		if (in_range(f, c, n, dv, " seconds"))
			*(double *)p = dv;
		break;
	case VG_F_DUR_U64:
		if (dur_value(c, n, &dv) != 0)
			break;
		if (in_range(f, c, n, dv, " seconds"))
			*(uint64_t *)p = (uint64_t)ceil(dv);
		break;
	case VG_F_ENUM:
		if ((s = scalar(c, n, "a string")) == NULL)
			break;
		if ((i = pick_value(c, n, f->values, s)) >= 0)
			*(int *)p = f->ivalues[i];
		break;
	case VG_F_FLAGS:
		if (vg_ynode_is_null(n)) {
			*(unsigned *)p = 0;
			break;
		}
		if (n->kind != VG_Y_SEQ) {
			type_error(c, n, "a list");
			break;
		}
		bits = 0;
		for (k = 0; k < n->n; k++) {
			size_t len = vg_dctx_pushi(c, k);

			s = scalar(c, n->items[k], "a string");
			if (s != NULL && (i = pick_value(c, n->items[k],
			    f->values, s)) >= 0)
				bits |= (unsigned)f->ivalues[i];
			vg_dctx_pop(c, len);
		}
		if (c->errors == before)
			*(unsigned *)p = bits;
		break;
	case VG_F_STRV:
		strv_decode(f, n, p, c);
		break;
	case VG_F_KVS:
		kvs_decode(f, n, p, c);
		break;
	case VG_F_SECTION:
		vg_schema_decode(f->sub, n, p, c);
		break;
	case VG_F_LIST:
		list_decode(f, n, base, c);
		break;
	case VG_F_CUSTOM:
		f->ops->decode(f, n, p, c);
		break;
	}
	if (c->errors != before)
		return;
	if (f->flags & VG_FF_SETFLAG)
		*(int *)((char *)base + f->off2) = 1;
	if (f->check != NULL)
		f->check(f, n, p, c);
}

/* A list of strings; replaces the old list when the new one is valid. */
static void
strv_decode(const struct vg_field *f, const struct vg_ynode *n,
    struct vg_strv *sv, struct vg_dctx *c)
{
	struct vg_strv out = VG_STRV_INIT;
	const char *s;
	size_t i, len;
	int before = c->errors;

	(void)f;
	if (!vg_ynode_is_null(n) && n->kind != VG_Y_SEQ) {
		type_error(c, n, "a list of strings");
		return;
	}
	for (i = 0; n != NULL && !vg_ynode_is_null(n) && i < n->n; i++) {
		len = vg_dctx_pushi(c, i);
		loc_record(c, n->items[i], n->items[i]);
		if ((s = scalar(c, n->items[i], "a string")) != NULL)
			vg_strv_push(&out, s);
		vg_dctx_pop(c, len);
	}
	if (c->errors != before) {
		vg_strv_release(&out);
		return;
	}
	vg_strv_release(sv);
	*sv = out;
}

/* A mapping of strings, merged key by key; a null value removes a key. */
static void
kvs_decode(const struct vg_field *f, const struct vg_ynode *n,
    struct vg_kvs *kvs, struct vg_dctx *c)
{
	const struct vg_ynode *k, *v;
	const char *s;
	size_t i, len;
	long at;

	(void)f;
	if (vg_ynode_is_null(n))
		return;
	if (n->kind != VG_Y_MAP) {
		type_error(c, n, "a mapping of names to strings");
		return;
	}
	for (i = 0; i < n->n; i++) {
		k = n->items[2 * i];
		v = n->items[2 * i + 1];
		len = vg_dctx_push(c, k->str);
		if (vg_ynode_is_null(v)) {
			kvs_del(kvs, k->str);
		} else if ((s = scalar(c, v, "a string")) != NULL) {
			vg_kvs_set(kvs, k->str, s);
			at = kvs_find(kvs, k->str);
			kvs->v[at].loc = (struct vg_loc){ c->file, v->line,
			    v->col };
		}
		vg_dctx_pop(c, len);
	}
}

/* True when n may stand for one item of a list of section s: a mapping,
 * or a scalar when s has a scalar_key. */
static int
item_ok(const struct vg_section *s, const struct vg_ynode *n)
{
	return n->kind == VG_Y_MAP || (s->scalar_key != NULL &&
	    n->kind == VG_Y_SCALAR && !vg_ynode_is_null(n));
}

/* Says what a list of section s takes, for n that is none of it. */
static void
item_error(const struct vg_section *s, const struct vg_ynode *n,
    struct vg_dctx *c, int in_list)
{
	char want[128];

	if (s->scalar_key == NULL) {
		type_error(c, n, in_list ? "a mapping" : "a list");
		return;
	}
	snprintf(want, sizeof(want), in_list ? "a string (its %s) or a "
	    "mapping with '%s'" : "a string (its %s), a mapping with '%s', "
	    "or a list of them", s->scalar_key, s->scalar_key);
	type_error(c, n, want);
}

/* A list of sub-sections; replaces the old list when valid.  A section
 * with a scalar_key also takes one item in place of the list. */
static void
list_decode(const struct vg_field *f, const struct vg_ynode *n, void *base,
    struct vg_dctx *c)
{
	void **arr = (void **)((char *)base + f->off);
	size_t *count = (size_t *)((char *)base + f->off2);
	const struct vg_ynode *const *items;
	char *out = NULL, *el;
	size_t i, j, len, nitems = 0;
	int before = c->errors, one;

	one = f->sub->scalar_key != NULL && !vg_ynode_is_null(n) &&
	    n->kind != VG_Y_SEQ && item_ok(f->sub, n);
	if (!vg_ynode_is_null(n) && n->kind != VG_Y_SEQ && !one) {
		item_error(f->sub, n, c, 0);
		return;
	}
	items = one ? (const struct vg_ynode *const *)&n :
	    (const struct vg_ynode *const *)(vg_ynode_is_null(n) ? NULL :
	    n->items);
	if (!vg_ynode_is_null(n))
		nitems = one ? 1 : n->n;
	if (nitems > 0)
		out = vg_xcalloc(nitems, f->size);
	for (i = 0; out != NULL && i < nitems; i++) {
		el = out + i * f->size;
		vg_schema_defaults(f->sub, el);
		len = vg_dctx_pushi(c, i);
		loc_record(c, items[i], items[i]);
		if (!item_ok(f->sub, items[i]))
			item_error(f->sub, items[i], c, 1);
		else
			vg_schema_decode(f->sub, items[i], el, c);
		vg_dctx_pop(c, len);
	}
	if (c->errors != before) {
		for (j = 0; out != NULL && j < nitems; j++)
			vg_schema_release(f->sub, out + j * f->size);
		free(out);
		return;
	}
	field_release(f, base);
	*arr = out;
	*count = out != NULL ? nitems : 0;
}

/* Finds the field named key (or aliased so) in s. */
static const struct vg_field *
field_find(const struct vg_section *s, const char *key)
{
	const struct vg_field *f;

	for (f = s->fields; f->key != NULL; f++)
		if (strcmp(f->key, key) == 0 ||
		    (f->alias != NULL && strcmp(f->alias, key) == 0))
			return f;
	return NULL;
}

/* Reports an unknown key with the nearest valid one, or all of them. */
static void
unknown_key(const struct vg_section *s, const struct vg_ynode *k,
    struct vg_dctx *c)
{
	const char *names[128], *near;
	struct vg_buf where = VG_BUF_INIT, all = VG_BUF_INIT;
	const struct vg_field *f;
	char buf[64];
	size_t n = 0, len;

	for (f = s->fields; f->key != NULL && n < 126; f++) {
		if (c->config && (f->flags & VG_FF_NOCONFIG))
			continue;
		vg_buf_printf(&all, "%s%s", n ? ", " : "", f->key);
		names[n++] = f->key;
		if (f->alias != NULL)
			names[n++] = f->alias;
	}
	if (c->path[0] != '\0')
		vg_buf_printf(&where, " in '%s'", c->path);
	near = vg_did_you_mean(k->str, names, n);
	if (near != NULL) {
		vg_dctx_error(c, k, "unknown key %s%s; did you mean '%s'?",
		    vg_dctx_what(k, buf, sizeof(buf)), vg_buf_str(&where),
		    near);
		/* The key meant is as good as written with a problem: no
		 * second message says that it is missing. */
		len = vg_dctx_push(c, near);
		if (c->bad != NULL)
			vg_strv_push(c->bad, c->path);
		vg_dctx_pop(c, len);
	} else
		vg_dctx_error(c, k, "unknown key %s%s (valid keys: %s)",
		    vg_dctx_what(k, buf, sizeof(buf)), vg_buf_str(&where),
		    vg_buf_str(&all));
	vg_buf_release(&where);
	vg_buf_release(&all);
}

/* The templates of s in base (tmpl_off), or NULL. */
static struct vg_kvs *
tmpl_of(const struct vg_section *s, void *base)
{
	return s->tmpl_off == 0 ? NULL :
	    (struct vg_kvs *)((char *)base + s->tmpl_off - 1);
}

/* Decodes field f's value v, or keeps it as a template when s takes
 * them and v holds "${{". */
static void
decode_or_keep(const struct vg_section *s, const struct vg_field *f,
    const struct vg_ynode *v, void *base, struct vg_dctx *c)
{
	struct vg_kvs *tm = tmpl_of(s, base);
	int before = c->errors;
	long i;

	if (tm == NULL || v == NULL || v->kind != VG_Y_SCALAR ||
	    vg_ynode_is_null(v) || strstr(v->str, "${{") == NULL) {
		vg_schema_decode_field(f, v, base, c);
		if (tm != NULL && c->errors == before)
			kvs_del(tm, f->key);
		return;
	}
	if (c->config) {
		vg_dctx_error(c, v, "'%s': '${{ ... }}' takes a task's matrix "
		    "values: it belongs in a manifest, not in a config file",
		    c->path);
		return;
	}
	if (strlen(v->str) != v->len) {
		vg_dctx_error(c, v, "'%s' must not contain NUL bytes",
		    c->path);
		return;
	}
	vg_kvs_set(tm, f->key, v->str);
	i = kvs_find(tm, f->key);
	tm->v[i].loc = (struct vg_loc){ c->file, v->line, v->col };
}

void
vg_schema_decode(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_field *f;
	const struct vg_ynode *k, *seen[128];
	struct vg_ynode key, map, *pair[2];
	size_t i, idx, len;
	int before = c->errors;

	if (vg_ynode_is_null(n))
		return;
	if (n->kind == VG_Y_SCALAR && s->scalar_key != NULL) {
		/* { scalar_key: n }, placed where n is. */
		key = (struct vg_ynode){ .kind = VG_Y_SCALAR, .line = n->line,
		    .col = n->col, .str = (char *)(uintptr_t)s->scalar_key,
		    .len = strlen(s->scalar_key) };
		pair[0] = &key;
		pair[1] = (struct vg_ynode *)(uintptr_t)n;
		map = (struct vg_ynode){ .kind = VG_Y_MAP, .line = n->line,
		    .col = n->col, .items = pair, .n = 1 };
		n = &map;
	}
	if (n->kind != VG_Y_MAP) {
		if (c->path[0] == '\0') {
			char buf[64];

			vg_dctx_error(c, n, "%s must be a mapping of keys to "
			    "values, not %s", c->config ? "a config file" :
			    "a manifest", vg_dctx_what(n, buf, sizeof(buf)));
		} else {
			type_error(c, n, "a mapping");
		}
		return;
	}
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n->n; i++) {
		k = n->items[2 * i];
		if (c->skip_key != NULL && c->path[0] == '\0' &&
		    strcmp(k->str, c->skip_key) == 0)
			continue;
		if ((f = field_find(s, k->str)) == NULL ||
		    (c->config && (f->flags & VG_FF_NOCONFIG) &&
		    c->path[0] != '\0')) {
			unknown_key(s, k, c);
			continue;
		}
		idx = (size_t)(f - s->fields);
		len = vg_dctx_push(c, f->key);
		loc_record(c, k, n->items[2 * i + 1]);
		if (c->config && (f->flags & VG_FF_NOCONFIG)) {
			vg_dctx_error(c, k, "'%s' belongs in a manifest, not "
			    "in a config file", c->path);
		} else if (!c->config && !c->raw &&
		    (f->flags & VG_FF_CONFIGONLY)) {
			vg_dctx_error(c, k, "'%s': set it in a vigil config "
			    "file (site or user), not in a manifest", c->path);
		} else if (idx < 128 && seen[idx] != NULL) {
			vg_dctx_error(c, k, "'%s' is given twice (as '%s' at "
			    "line %d and as '%s')", c->path,
			    seen[idx]->str, seen[idx]->line, k->str);
		} else {
			if (idx < 128)
				seen[idx] = k;
			decode_or_keep(s, f, n->items[2 * i + 1], base, c);
		}
		vg_dctx_pop(c, len);
	}
	if (s->loc_off != 0)
		*(struct vg_loc *)((char *)base + s->loc_off - 1) =
		    (struct vg_loc){ c->file, n->line, n->col };
	/* Cross-field checks only make sense on fields that decoded. */
	if (s->check != NULL && c->errors == before)
		s->check(s, n, base, c);
}

/* ---- defaults, release, encode ---- */

void
vg_schema_defaults(const struct vg_section *s, void *base)
{
	struct vg_dctx c;
	struct vg_ynode tmp;
	const struct vg_field *f;
	const char *p, *q;
	char name[64];
	int i;

	memset(&c, 0, sizeof(c));
	for (f = s->fields; f->key != NULL; f++) {
		if (f->type == VG_F_SECTION) {
			vg_schema_defaults(f->sub, (char *)base + f->off);
			continue;
		}
		if (f->def == NULL)
			continue;
		if (f->type == VG_F_FLAGS) {
			for (p = f->def; *p != '\0'; p = *q ? q + 1 : q) {
				q = p + strcspn(p, ",");
				snprintf(name, sizeof(name), "%.*s",
				    (int)(q - p), p);
				for (i = 0; f->values[i] != NULL; i++)
					if (strcmp(f->values[i], name) == 0)
						*(unsigned *)((char *)base +
						    f->off) |=
						    (unsigned)f->ivalues[i];
			}
			continue;
		}
		memset(&tmp, 0, sizeof(tmp));
		tmp.kind = VG_Y_SCALAR;
		tmp.style = VG_YS_QUOTED;
		tmp.str = vg_xstrdup(f->def);
		tmp.len = strlen(f->def);
		vg_schema_decode_field(f, &tmp, base, &c);
		free(tmp.str);
		if (f->flags & VG_FF_SETFLAG)
			*(int *)((char *)base + f->off2) = 0;
	}
}

/* Frees what one field owns. */
static void
field_release(const struct vg_field *f, void *base)
{
	void *p = (char *)base + f->off;
	size_t i, *count;
	char *arr;

	switch (f->type) {
	case VG_F_STR:
		free(*(char **)p);
		*(char **)p = NULL;
		break;
	case VG_F_STRV:
		vg_strv_release(p);
		break;
	case VG_F_KVS:
		vg_kvs_release(p);
		break;
	case VG_F_SECTION:
		vg_schema_release(f->sub, p);
		break;
	case VG_F_LIST:
		arr = *(char **)p;
		count = (size_t *)((char *)base + f->off2);
		for (i = 0; arr != NULL && i < *count; i++)
			vg_schema_release(f->sub, arr + i * f->size);
		free(arr);
		*(char **)p = NULL;
		*count = 0;
		break;
	case VG_F_CUSTOM:
		f->ops->release(f, p);
		break;
	default:
		break;
	}
}

void
vg_schema_release(const struct vg_section *s, void *base)
{
	const struct vg_field *f;

	for (f = s->fields; f->key != NULL; f++)
		field_release(f, base);
	vg_kvs_release(tmpl_of(s, base));
}

/* Copies one field of src to dst. */
static void
field_copy(const struct vg_field *f, void *dst, const void *src)
{
	void *d = (char *)dst + f->off;
	const void *p = (const char *)src + f->off;
	const struct vg_strv *sv = p;
	const struct vg_kvs *kv = p;
	size_t i;

	if (f->flags & VG_FF_SETFLAG)
		memcpy((char *)dst + f->off2, (const char *)src + f->off2,
		    sizeof(int));
	switch (f->type) {
	case VG_F_STR:
		*(char **)d = vg_xstrdup(*(char *const *)p);
		break;
	case VG_F_INT:
	case VG_F_BOOL:
	case VG_F_ENUM:
		memcpy(d, p, sizeof(int));
		break;
	case VG_F_FLAGS:
		memcpy(d, p, sizeof(unsigned));
		break;
	case VG_F_U64:
	case VG_F_BYTES:
	case VG_F_DUR_U64:
		memcpy(d, p, sizeof(uint64_t));
		break;
	case VG_F_FLOAT:
	case VG_F_DUR:
		memcpy(d, p, sizeof(double));
		break;
	case VG_F_STRV:
		memset(d, 0, sizeof(struct vg_strv));
		for (i = 0; i < sv->n; i++)
			vg_strv_push(d, sv->v[i]);
		break;
	case VG_F_KVS:
		memset(d, 0, sizeof(struct vg_kvs));
		for (i = 0; i < kv->n; i++)
			vg_kvs_set(d, kv->v[i].key, kv->v[i].value);
		break;
	case VG_F_SECTION:
		vg_schema_copy(f->sub, d, p);
		break;
	case VG_F_LIST:
	case VG_F_CUSTOM:
		fprintf(stderr, "vigil: vg_schema_copy: field '%s' cannot "
		    "be copied\n", f->key);
		abort();
	}
}

void
vg_schema_copy(const struct vg_section *s, void *dst, const void *src)
{
	const struct vg_field *f;

	for (f = s->fields; f->key != NULL; f++)
		field_copy(f, dst, src);
	if (s->tmpl_off != 0)
		memset(tmpl_of(s, dst), 0, sizeof(struct vg_kvs));
	if (s->loc_off != 0)
		memcpy((char *)dst + s->loc_off - 1,
		    (const char *)src + s->loc_off - 1,
		    sizeof(struct vg_loc));
}

/* Emits the separator the writer owes before a raw value. */
static void
json_raw(struct vg_json_writer *w, const char *text)
{
	if (w->after_key) {
		w->after_key = 0;
	} else if (w->depth > 0) {
		if (w->need_comma[w->depth - 1])
			vg_buf_addc(w->out, ',');
		w->need_comma[w->depth - 1] = 1;
	}
	vg_buf_adds(w->out, text);
}

void
vg_json_exact_num(struct vg_json_writer *w, double v)
{
	char buf[40];
	int prec;

	if (!isfinite(v)) {
		json_raw(w, "null");
		return;
	}
	/* The shortest %g form that reads back as the same double. */
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	json_raw(w, buf);
}

void
vg_json_u64(struct vg_json_writer *w, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	json_raw(w, buf);
}

/* Writes the name of enum value v (or null when it has none). */
static void
enum_encode(const struct vg_field *f, int v, struct vg_json_writer *w)
{
	size_t i;

	for (i = 0; f->values[i] != NULL; i++) {
		if (f->ivalues[i] == v) {
			vg_json_str(w, f->values[i]);
			return;
		}
	}
	vg_json_null(w);
}

/* Writes one field's value. */
static void
field_encode(const struct vg_field *f, const void *base,
    struct vg_json_writer *w)
{
	const void *p = (const char *)base + f->off;
	const struct vg_strv *sv;
	const struct vg_kvs *kvs;
	const char *arr;
	size_t i, count;
	unsigned bits;

	if ((f->flags & VG_FF_SETFLAG) &&
	    !*(const int *)((const char *)base + f->off2)) {
		vg_json_null(w);
		return;
	}
	switch (f->type) {
	case VG_F_STR:
		vg_json_str(w, *(char *const *)p);
		break;
	case VG_F_INT:
		vg_json_int(w, *(const int *)p);
		break;
	case VG_F_BOOL:
		vg_json_bool(w, *(const int *)p);
		break;
	case VG_F_U64:
	case VG_F_BYTES:
	case VG_F_DUR_U64:
		vg_json_u64(w, *(const uint64_t *)p);
		break;
	case VG_F_FLOAT:
	case VG_F_DUR:
		vg_json_exact_num(w, *(const double *)p);
		break;
	case VG_F_ENUM:
		enum_encode(f, *(const int *)p, w);
		break;
	case VG_F_FLAGS:
		bits = *(const unsigned *)p;
		vg_json_arr_begin(w);
		for (i = 0; f->values[i] != NULL; i++)
			if (bits & (unsigned)f->ivalues[i])
				vg_json_str(w, f->values[i]);
		vg_json_arr_end(w);
		break;
	case VG_F_STRV:
		sv = p;
		vg_json_arr_begin(w);
		for (i = 0; i < sv->n; i++)
			vg_json_str(w, sv->v[i]);
		vg_json_arr_end(w);
		break;
	case VG_F_KVS:
		kvs = p;
		vg_json_obj_begin(w);
		for (i = 0; i < kvs->n; i++) {
			vg_json_key(w, kvs->v[i].key);
			vg_json_str(w, kvs->v[i].value);
		}
		vg_json_obj_end(w);
		break;
	case VG_F_SECTION:
		vg_schema_encode(f->sub, p, w);
		break;
	case VG_F_LIST:
		arr = *(char *const *)p;
		count = *(const size_t *)((const char *)base + f->off2);
		vg_json_arr_begin(w);
		for (i = 0; i < count; i++)
			vg_schema_encode(f->sub, arr + i * f->size, w);
		vg_json_arr_end(w);
		break;
	case VG_F_CUSTOM:
		f->ops->encode(f, p, w);
		break;
	}
}

void
vg_schema_encode(const struct vg_section *s, const void *base,
    struct vg_json_writer *w)
{
	const struct vg_kvs *tm = s->tmpl_off == 0 ? NULL :
	    (const struct vg_kvs *)((const char *)base + s->tmpl_off - 1);
	const struct vg_field *f;
	const char *t;

	vg_json_obj_begin(w);
	for (f = s->fields; f->key != NULL; f++) {
		if (f->flags & VG_FF_NOJSON)
			continue;
		vg_json_key(w, f->key);
		if (tm != NULL && (t = vg_kvs_get(tm, f->key)) != NULL)
			vg_json_str(w, t);
		else
			field_encode(f, base, w);
	}
	vg_json_obj_end(w);
}

/* ---- checks shared by section tables ---- */

/*
 * Mount specs "src[:dst[:ro|rw]]" with an absolute dst; dst_required makes
 * the ":dst" part mandatory (docker volumes) instead of optional
 * (apptainer binds).
 */
void
vg_schema_check_mounts(const struct vg_ynode *n, const struct vg_strv *sv,
    struct vg_dctx *c, int dst_required)
{
	const char *v, *dst, *mode;
	size_t i;

	for (i = 0; i < sv->n; i++) {
		v = sv->v[i];
		dst = strchr(v, ':');
		mode = dst ? strchr(dst + 1, ':') : NULL;
		if (*v == '\0' || dst == v || (dst == NULL && dst_required) ||
		    (dst != NULL && dst[1] != '/') ||
		    (mode != NULL && strcmp(mode, ":ro") != 0 &&
		    strcmp(mode, ":rw") != 0))
			vg_dctx_error(c, n->items[i], "'%s[%zu]' must look "
			    "like %sSOURCE:/DEST or SOURCE:/DEST:ro, not '%s'",
			    c->path, i, dst_required ? "" : "SOURCE, ", v);
	}
}

/* Offset of the first control character (a byte below 0x20, or 0x7f) in
 * a scalar's text, or -1 when there is none. */
static long
control_at(const struct vg_ynode *n)
{
	size_t i;

	for (i = 0; i < n->len; i++)
		if ((unsigned char)n->str[i] < 0x20 || n->str[i] == 0x7f)
			return (long)i;
	return -1;
}

void
vg_schema_check_options(const struct vg_ynode *n, const struct vg_kvs *kv,
    const char *field, const char *const *allowed,
    int (*check)(const char *, const char *, char *, size_t),
    struct vg_dctx *c)
{
	const struct vg_ynode *k;
	const char *near;
	char why[256];
	size_t i, j, nn = 0;

	while (allowed[nn] != NULL)
		nn++;
	for (i = 0; i < kv->n; i++) {
		if (check(kv->v[i].key, kv->v[i].value, why, sizeof why) == 0)
			continue;
		/* The key's own node, for its line and column. */
		k = n;
		for (j = 0; n != NULL && n->kind == VG_Y_MAP && j < n->n; j++)
			if (strcmp(n->items[2 * j]->str, kv->v[i].key) == 0)
				k = n->items[2 * j];
		near = strncmp(why, "not an", 6) == 0 ? vg_did_you_mean(
		    kv->v[i].key, allowed, nn) : NULL;
		vg_dctx_error(c, k, "'%s.%s': %s%s%s%s", field, kv->v[i].key,
		    why, near != NULL ? "; did you mean '" : "",
		    near != NULL ? near : "", near != NULL ? "'?" : "");
	}
}

/* A field check: no control characters in a string or list of strings
 * (names that end up in #SBATCH lines and on command lines). */
void
vg_schema_check_printable(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_ynode *el;
	long at;
	size_t i;

	(void)p;
	if (f->type == VG_F_STR) {
		if (n->kind == VG_Y_SCALAR && (at = control_at(n)) >= 0)
			vg_dctx_error(c, n, "'%s' holds a control character "
			    "(byte 0x%02x at offset %ld): only printable "
			    "characters are valid", c->path,
			    (unsigned char)n->str[at], at);
		return;
	}
	for (i = 0; n->kind == VG_Y_SEQ && i < n->n; i++) {
		el = n->items[i];
		if (el->kind == VG_Y_SCALAR && (at = control_at(el)) >= 0)
			vg_dctx_error(c, el, "'%s[%zu]' holds a control "
			    "character (byte 0x%02x at offset %ld): only "
			    "printable characters are valid", c->path, i,
			    (unsigned char)el->str[at], at);
	}
}

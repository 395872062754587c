/*
 * buf.c - growable buffers, checked allocation and shell quoting.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"

/* Reports allocation failure and aborts: there is nothing sane to do. */
static void
oom(size_t n)
{
	char msg[96];
	int len;

	len = snprintf(msg, sizeof(msg), "vigil: out of memory (%zu bytes)\n",
	    n);
	if (len > 0)
		(void)!write(2, msg, (size_t)len);
	abort();
}

void *
vg_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void *
vg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom(n * size);
	return p;
}

void *
vg_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		oom(n);
	return q;
}

/* Grows an array so that it holds at least need elements. */
void *
vg_xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;

	if (need <= *cap)
		return p;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > ((size_t)-1) / 2 / size)
			oom(need * size);
		ncap *= 2;
	}
	p = vg_xrealloc(p, ncap * size);
	*cap = ncap;
	return p;
}

char *
vg_xstrdup(const char *s)
{
	return s == NULL ? NULL : vg_xstrndup(s, strlen(s));
}

char *
vg_xstrndup(const char *s, size_t n)
{
	char *p;

	p = vg_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
vg_xasprintf(const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return vg_buf_detach(&b);
}

void
vg_buf_init(struct vg_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
vg_buf_release(struct vg_buf *b)
{
	free(b->data);
	vg_buf_init(b);
}

void
vg_buf_reset(struct vg_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* Makes room for n more bytes plus the terminating NUL (the common case,
 * room already there, costs one comparison: the gate and the audit
 * append a few bytes at a time). */
static inline void
buf_reserve(struct vg_buf *b, size_t n)
{
	if (n < b->cap - b->len)
		return;
	if (n > ((size_t)-1) - b->len - 1)
		oom(n);
	b->data = vg_xgrow(b->data, &b->cap, b->len + n + 1, 1);
}

void
vg_buf_add(struct vg_buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
vg_buf_adds(struct vg_buf *b, const char *s)
{
	vg_buf_add(b, s, strlen(s));
}

void
vg_buf_addc(struct vg_buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

void
vg_buf_vprintf(struct vg_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	buf_reserve(b, 64);
	va_copy(cp, ap);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		buf_reserve(b, (size_t)n);
		n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		if (n < 0)
			return;
	}
	b->len += (size_t)n;
}

void
vg_buf_printf(struct vg_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vg_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *
vg_buf_detach(struct vg_buf *b)
{
	char *p = b->data;

	if (p == NULL)
		p = vg_xstrdup("");
	vg_buf_init(b);
	return p;
}

const char *
vg_buf_str(const struct vg_buf *b)
{
	return b->data != NULL ? b->data : "";
}

/* True when s needs no quoting for sh: letters, digits and -_./:=,+@% */
static int
shword_plain(const char *s)
{
	const unsigned char *p;

	if (*s == '\0')
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9'))
			continue;
		if (strchr("-_./:,+@%", *p) == NULL)
			return 0;
	}
	return 1;
}

void
vg_buf_shquote(struct vg_buf *b, const char *s)
{
	if (shword_plain(s))
		vg_buf_adds(b, s);
	else
		vg_buf_squote(b, s);
}

void
vg_buf_squote(struct vg_buf *b, const char *s)
{
	vg_buf_addc(b, '\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			vg_buf_adds(b, "'\\''");
		else
			vg_buf_addc(b, *s);
	}
	vg_buf_addc(b, '\'');
}

int
vg_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void
vg_strv_take(struct vg_strv *sv, char *s)
{
	sv->v = vg_xgrow(sv->v, &sv->cap, sv->n + 2, sizeof(*sv->v));
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
vg_strv_push(struct vg_strv *sv, const char *s)
{
	vg_strv_take(sv, vg_xstrdup(s));
}

void
vg_strv_pushf(struct vg_strv *sv, const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_strv_take(sv, vg_buf_detach(&b));
}

void
vg_strv_release(struct vg_strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
	sv->cap = 0;
}

void
vg_strv_copy(struct vg_strv *dst, const struct vg_strv *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		vg_strv_push(dst, src->v[i]);
}

void
vg_put_digits(char *c, size_t *n, unsigned long long v, int min)
{
	do {
		c[--*n] = (char)('0' + v % 10);
		v /= 10;
		min--;
	} while (v > 0 || min > 0);
}

void
vg_buf_add_ll(struct vg_buf *b, long long v)
{
	char c[24];
	size_t n = sizeof(c);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v :
	    (unsigned long long)v;

	vg_put_digits(c, &n, u, 1);
	if (v < 0)
		c[--n] = '-';
	vg_buf_add(b, c + n, sizeof(c) - n);
}

void
vg_buf_add_fixed(struct vg_buf *b, double v, int prec)
{
	static const double scale[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6 };
	unsigned long long u, p = 1;
	double x, err, f;
	char c[48];
	size_t n = sizeof(c);
	int k;

	if (prec < 0 || prec > 6 || !(v >= 0) || v * scale[prec] >= 9e15) {
		vg_buf_printf(b, "%.*f", prec, v);
		return;
	}
	/* x is v * 10^prec rounded; fma gives the rounding's error exactly
	 * (the product is x + err), which decides a near-half: to the
	 * nearest, an exact half to even, as printf rounds the exact value. */
	x = v * scale[prec];
	err = fma(v, scale[prec], -x);
	u = (unsigned long long)x;
	f = x - (double)u;
	if (f > 0.5 || (f == 0.5 && (err > 0 || (err == 0 && (u & 1) != 0))))
		u++;
	for (k = 0; k < prec; k++)
		p *= 10;
	if (prec > 0) {
		vg_put_digits(c, &n, u % p, prec);
		c[--n] = '.';
	}
	vg_put_digits(c, &n, u / p, 1);
	vg_buf_add(b, c + n, sizeof(c) - n);
}

int
vg_strv_contains(const struct vg_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * buf.h - a growable byte buffer, always NUL-terminated, and string
 * vectors.  These are the only string builders in vigil; everything that
 * assembles text (JSON, batch scripts, shell quoting) appends to a vg_buf.
 *
 * Allocation failure aborts with a message (vg_xmalloc and friends): a
 * job runner out of memory cannot do anything useful, and checking every
 * small append would hide the real error paths.
 */
#ifndef VG_BUF_H
#define VG_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct vg_buf {
	char	*data;		/* NUL-terminated; NULL until first append */
	size_t	 len;
	size_t	 cap;
};

#define VG_BUF_INIT { NULL, 0, 0 }

void	*vg_xmalloc(size_t n);
void	*vg_xcalloc(size_t n, size_t size);
void	*vg_xrealloc(void *p, size_t n);
/* Growth helper: makes room for *cap >= need elements of size size. */
void	*vg_xgrow(void *p, size_t *cap, size_t need, size_t size);
char	*vg_xstrdup(const char *s);		/* NULL gives NULL */
char	*vg_xstrndup(const char *s, size_t n);
char	*vg_xasprintf(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

void	 vg_buf_init(struct vg_buf *b);
/* Frees the contents; the buffer can be reused after vg_buf_init. */
void	 vg_buf_release(struct vg_buf *b);
/* Empties the buffer, keeping its memory. */
void	 vg_buf_reset(struct vg_buf *b);
void	 vg_buf_add(struct vg_buf *b, const void *p, size_t n);
void	 vg_buf_adds(struct vg_buf *b, const char *s);
void	 vg_buf_addc(struct vg_buf *b, char c);
/* Appends a string literal (its length known at compile time). */
#define VG_BUF_ADDL(b, lit)	vg_buf_add((b), "" lit, sizeof(lit) - 1)
void	 vg_buf_printf(struct vg_buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 vg_buf_vprintf(struct vg_buf *b, const char *fmt, va_list ap);
/* Integers and fixed-point numbers without a printf conversion (which
 * costs more than the rest of a report row or an audit line):
 * vg_buf_add_ll as "%lld"; vg_buf_add_fixed as "%.*f" with prec 0..6
 * (to the nearest, an exact half to even, as printf rounds the exact
 * value), through printf when v is negative, NaN, too large for 64-bit
 * fixed point or prec is out of range. */
void	 vg_buf_add_ll(struct vg_buf *b, long long v);
void	 vg_buf_add_fixed(struct vg_buf *b, double v, int prec);
/* The digits of v, at least min of them, ending at c + *n: *n becomes the
 * first digit's index (c has room for 20 more than min). */
void	 vg_put_digits(char *c, size_t *n, unsigned long long v, int min);
/* Returns the contents (caller frees) and leaves the buffer empty. */
char	*vg_buf_detach(struct vg_buf *b);
/* Returns the contents, never NULL ("" when empty); borrowed. */
const char *vg_buf_str(const struct vg_buf *b);

/*
 * Appends s quoted for POSIX sh so that the shell reads it back as exactly
 * one word with the same bytes: 'it'\''s'.  Plain words stay unquoted.
 */
void	 vg_buf_shquote(struct vg_buf *b, const char *s);
/* Appends s single-quoted like vg_buf_shquote, even when it is plain. */
void	 vg_buf_squote(struct vg_buf *b, const char *s);

/* The value of hex digit c (either case), or -1 when c is not one. */
int	 vg_hexval(int c);

/* A NULL-terminated vector of owned strings (argv, lists). */
struct vg_strv {
	char	**v;		/* v[n] == NULL when n > 0 */
	size_t	  n;
	size_t	  cap;
};

#define VG_STRV_INIT { NULL, 0, 0 }

void	 vg_strv_push(struct vg_strv *sv, const char *s);	/* copies */
void	 vg_strv_pushf(struct vg_strv *sv, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 vg_strv_take(struct vg_strv *sv, char *s);		/* owns s */
void	 vg_strv_release(struct vg_strv *sv);
void	 vg_strv_copy(struct vg_strv *dst, const struct vg_strv *src);
/* 1 when s is one of sv's strings. */
int	 vg_strv_contains(const struct vg_strv *sv, const char *s);

#endif

/*
 * actx.c - the helpers of the analyser context (actx.h): the step
 * budget and span override, findings, variables, files written earlier
 * in the command, the stack of scratch buffers the policy lends each
 * analysis, and stream constructors.  Everything is allocated in the
 * analysis arena; nothing here analyses anything.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runner/policy/actx.h"
#include "runner/policy/arena.h"

/* Takes the next scratch buffer; see actx.h. */
struct vg_buf *
pl_buf_get(struct pl_an *an)
{
	struct vg_buf *b;

	if (an->nbufs >= PL_MAX_BUFS) {
		an->over = 1;
		an->overwhy = "nesting too deep";
		return NULL;
	}
	b = &an->bufs[an->nbufs++];
	vg_buf_reset(b);
	if (b->data == NULL)
		vg_buf_add(b, "", 0);
	return b;
}

/* Gives back the last buffer taken. */
void
pl_buf_put(struct pl_an *an)
{
	if (an->nbufs > 0)
		an->nbufs--;
}

/* Spends budget; see actx.h. */
int
pl_step(struct pl_an *an, int n)
{
	an->work -= n;
	if (an->work < 0) {
		an->over = 1;
		an->overwhy = "too complex (step limit)";
		return 0;
	}
	return !an->over;
}

/* Applies the span override of nested text. */
void
pl_span(struct pl_an *an, size_t *off, size_t *len)
{
	if (an->spanfix) {
		*off = an->span_off;
		*len = an->span_len;
	}
}

/* Records a finding, of the built-in floor when floor is set; a second
 * finding of the same rule only upgrades the first to the floor. */
static void
find_v(struct pl_an *an, const char *floor, const char *cat,
    const char *rule, size_t off, size_t len, const char *fmt, va_list ap)
{
	struct pl_finding *f = NULL;
	int k;

	pl_span(an, &off, &len);
	if (off > an->srclen)
		off = an->srclen;
	if (off + len > an->srclen)
		len = an->srclen - off;
	for (k = 0; k < an->nfind; k++)
		if (an->find[k].rule == rule)
			f = &an->find[k];
	/* A rule found again from another source (or an unknown one) no
	 * longer has one source URL. */
	if (f != NULL && (f->url == NULL || an->find_url == NULL ||
	    strcmp(f->url, an->find_url) != 0))
		f->urls = 2;
	if (f != NULL && (floor == NULL || f->floor != NULL))
		return;
	if (f == NULL) {
		if (an->nfind >= PL_MAX_FIND)
			return;
		f = &an->find[an->nfind++];
		f->url = an->find_url;
		f->urls = an->find_url != NULL;
	}
	f->category = cat;
	f->rule = rule;
	f->floor = floor;
	f->off = off;
	f->len = len;
	f->norm = an->curnorm;
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
}

/* Records a finding; see actx.h. */
void
pl_find(struct pl_an *an, const char *cat, const char *rule, size_t off,
    size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	find_v(an, NULL, cat, rule, off, len, fmt, ap);
	va_end(ap);
}

/* Records a finding of the built-in floor; see actx.h. */
void
pl_find_floor(struct pl_an *an, const char *floor, const char *cat,
    const char *rule, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	find_v(an, floor, cat, rule, off, len, fmt, ap);
	va_end(ap);
}

/* Looks a variable up by name. */
struct pl_var *
pl_var_get(struct pl_an *an, const char *name, size_t nlen)
{
	struct pl_var *v;

	for (v = an->vars; v != NULL; v = v->next)
		if (v->nlen == nlen && memcmp(v->name, name, nlen) == 0)
			return v;
	return NULL;
}

/* Sets or creates a variable. */
void
pl_var_set(struct pl_an *an, const char *name, size_t nlen, const char *val,
    size_t vlen, unsigned taint)
{
	struct pl_var *v = pl_var_get(an, name, nlen);

	if (v == NULL) {
		v = pl_alloc(an->a, sizeof(*v));
		v->name = pl_strndup(an->a, name, nlen);
		v->nlen = nlen;
		v->next = an->vars;
		an->vars = v;
	}
	v->val = val != NULL ? pl_strndup(an->a, val, vlen) : NULL;
	v->vlen = val != NULL ? vlen : 0;
	v->taint = taint;
	v->isarr = 0;
	if (val != NULL && memchr(val, PL_UNK, vlen) != NULL) {
		/* Partly unknown values stay usable for paths. */
		v->taint |= T_VAR;
	}
}

/* Notes a file the command wrote. */
void
pl_file_note(struct pl_an *an, const char *path, unsigned taint,
    const char *content, size_t clen)
{
	struct pl_file *f;
	const char *b;

	if (path == NULL)
		return;
	f = pl_alloc(an->a, sizeof(*f));
	f->path = path;
	b = strrchr(path, '/');
	f->base = b ? b + 1 : path;
	f->taint = taint;
	f->content = content;
	f->clen = clen;
	f->active = 0;
	f->next = an->files;
	an->files = f;
}

void
pl_pos_set(struct pl_an *an, const struct pl_field *argv, int n)
{
	int k;

	if (n < 0)
		n = 0;
	an->npos = n > 9 ? 9 : n;
	an->postaint = 0;
	for (k = 0; k < 9; k++) {
		an->pos[k] = k < n && !(argv[k].flags & F_UNK) ? argv[k].s :
		    NULL;
		if (k < n)
			an->postaint |= argv[k].taint;
	}
}

/* Looks a written file up by resolved path. */
struct pl_file *
pl_file_find(struct pl_an *an, const char *path)
{
	struct pl_file *f;

	if (path == NULL)
		return NULL;
	for (f = an->files; f != NULL; f = f->next)
		if (strcmp(f->path, path) == 0)
			return f;
	return NULL;
}

/* An unknown stream with taint. */
void
pl_stream_unknown(struct pl_stream *s, unsigned taint)
{
	memset(s, 0, sizeof(*s));
	s->taint = taint;
}

/* A known stream over borrowed bytes. */
void
pl_stream_text(struct pl_stream *s, const char *t, size_t n, unsigned taint)
{
	memset(s, 0, sizeof(*s));
	s->known = 1;
	s->s = t;
	s->len = n;
	s->taint = taint;
}

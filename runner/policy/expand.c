/*
 * expand.c - word expansion for the analyser: the shell's own steps
 * (tilde, parameters with their operators, command and process
 * substitution, arithmetic, field splitting on IFS, brace expansion)
 * applied to what is known statically.  Values assigned earlier in the
 * same command are propagated ("a=rm; $a -rf /"); the task environment
 * and the home, working and task directories are known; everything else
 * becomes the PL_UNK byte, tainted with where it came from, so that later
 * stages can reason about "some value" instead of guessing one.
 *
 * Pathname expansion is not performed: glob characters stay in the field
 * (flagged F_GLOB) and paths.c reasons about what they could match.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/policy/expand.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/bounds.h"
#include "runner/policy/parse.h"

/* The field being built. */
struct fb {
	struct pl_an	*an;
	struct vg_buf	*b;
	int		 active;	/* a field exists, possibly empty */
	unsigned	 flags;
	unsigned	 taint;
	struct pl_stream *proc;
	size_t		 off;
	size_t		 slen;
	struct pl_field	**out;
	int		*n;
	int		*cap;
	int		 nosplit;	/* assignment values, here-docs */
};

/* Appends the finished field (if any) to the output array. */
static int
fb_end(struct fb *f)
{
	struct pl_an *an = f->an;
	struct pl_field *fl;

	if (!f->active)
		return 0;
	if (*f->n >= PL_MAX_FIELDS) {
		an->over = 1;
		an->overwhy = "too many words";
		return -1;
	}
	if (*f->n >= *f->cap) {
		int ncap = *f->cap ? *f->cap * 2 : 16;
		struct pl_field *nv = pl_alloc(an->a, (size_t)ncap *
		    sizeof(*nv));

		if (*f->n > 0)
			memcpy(nv, *f->out, (size_t)*f->n * sizeof(*nv));
		*f->out = nv;
		*f->cap = ncap;
	}
	fl = &(*f->out)[(*f->n)++];
	fl->s = pl_strndup(an->a, f->b->data ? f->b->data : "", f->b->len);
	fl->len = f->b->len;
	fl->flags = f->flags;
	fl->taint = f->taint;
	fl->off = f->off;
	fl->slen = f->slen;
	fl->proc = f->proc;
	vg_buf_reset(f->b);
	f->active = 0;
	f->flags = 0;
	f->taint = 0;
	f->proc = NULL;
	return 0;
}

/* Appends value bytes; unquoted ones are split on IFS. */
static int
fb_value(struct fb *f, const char *s, size_t n, int quoted, unsigned taint)
{
	struct pl_an *an = f->an;
	const char *ifs = " \t\n";
	size_t ifslen = 3, i;
	struct pl_var *v;

	if (f->b->len + n > PL_MAX_VALUE) {
		an->over = 1;
		an->overwhy = "expansion too long";
		return -1;
	}
	f->taint |= taint;
	if (quoted || f->nosplit) {
		vg_buf_add(f->b, s, n);
		f->active = 1;
		for (i = 0; i < n; i++)
			if (s[i] == PL_UNK)
				f->flags |= F_UNK;
		return 0;
	}
	v = pl_var_get(an, "IFS", 3);
	if (v != NULL && v->val != NULL) {
		ifs = v->val;
		ifslen = v->vlen;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (ifslen > 0 && memchr(ifs, c, ifslen) != NULL) {
			if (fb_end(f) != 0)
				return -1;
			continue;
		}
		if (c == PL_UNK)
			f->flags |= F_UNK;
		if (c == '*' || c == '?' || c == '[')
			f->flags |= F_GLOB;
		vg_buf_addc(f->b, c);
		f->active = 1;
		f->taint |= taint;
	}
	return 0;
}

/* Home directory of ~user: the caller's home, or /home/user. */
static const char *
tilde_home(struct pl_an *an, const char *u, size_t n)
{
	if (n == 0)
		return an->home;
	if (n == 4 && memcmp(u, "root", 4) == 0)
		return "/root";
	{
		char *h = pl_alloc(an->a, n + 7);

		memcpy(h, "/home/", 6);
		memcpy(h + 6, u, n);
		return h;
	}
}

/* Appends an unquoted literal, marking braces and glob characters. */
static void
fb_lit(struct fb *f, const char *s, size_t n, int first, int assign)
{
	size_t i = 0;

	f->active = 1;
	if (first && n > 0 && s[0] == '~') {
		size_t e = 1;
		const char *h;

		while (e < n && s[e] != '/' && s[e] != ':')
			e++;
		h = tilde_home(f->an, s + 1, e - 1);
		if (h != NULL) {
			vg_buf_adds(f->b, h);
			i = e;
		} else {
			vg_buf_addc(f->b, PL_UNK);
			f->flags |= F_UNK;
			f->taint |= T_VAR;
			i = e;
		}
	}
	for (; i < n; i++) {
		char c = s[i];

		switch (c) {
		case '{':
			c = PL_BOPEN;
			break;
		case ',':
			c = PL_BCOMMA;
			break;
		case '}':
			c = PL_BCLOSE;
			break;
		case '*':
		case '?':
		case '[':
			f->flags |= F_GLOB;
			break;
		case '=':
		case ':':
			/* ~ after = or : in assignment values */
			if (assign && i + 1 < n && s[i + 1] == '~') {
				size_t e = i + 2;
				const char *h;

				while (e < n && s[e] != '/' && s[e] != ':')
					e++;
				vg_buf_addc(f->b, c);
				h = tilde_home(f->an, s + i + 2, e - i - 2);
				if (h != NULL)
					vg_buf_adds(f->b, h);
				else
					vg_buf_addc(f->b, PL_UNK);
				i = e - 1;
				continue;
			}
			break;
		}
		vg_buf_addc(f->b, c);
	}
}

/* Known variables that are not in the task environment. */
static int
builtin_var(struct pl_an *an, const char *name, size_t n, struct pl_var *v)
{
	const char *val = NULL;

#define IS(s) (n == sizeof(s) - 1 && memcmp(name, s, n) == 0)
	if (IS("HOME"))
		val = an->home;
	else if (IS("PWD"))
		val = an->cwd;
	else if (IS("VIGIL_TASK_DIR"))
		val = an->task_dir;
	else if (IS("IFS"))
		val = " \t\n";
	else if (IS("TMPDIR") || IS("TMP") || IS("TEMP") || IS("TEMPDIR"))
		val = "/tmp";
	else if (IS("SCRATCH") || IS("SLURM_TMPDIR") || IS("LOCAL_SCRATCH") ||
	    IS("PSCRATCH") || IS("SCRATCHDIR") || IS("WORKDIR") ||
	    IS("TMPDIR_LOCAL") || IS("VIGIL_SCRATCH") || IS("SCRATCH_DIR"))
		val = "/scratch";
	else if (IS("XDG_CACHE_HOME") && an->home != NULL) {
		size_t hl = strlen(an->home);
		char *c = pl_alloc(an->a, hl + 8);

		memcpy(c, an->home, hl);
		memcpy(c + hl, "/.cache", 7);
		val = c;
	}
#undef IS
	if (val == NULL)
		return 0;
	v->val = val;
	v->vlen = strlen(val);
	v->taint = 0;
	return 1;
}

/* Resolves a variable name to its value; 0 when unknown. */
static int
var_lookup(struct pl_an *an, const char *name, size_t n, struct pl_var *v)
{
	struct pl_var *sv = pl_var_get(an, name, n);
	const struct vg_kvs *env = an->ctx ? an->ctx->env : NULL;
	size_t k;

	memset(v, 0, sizeof(*v));
	if (sv != NULL) {
		*v = *sv;
		return sv->val != NULL;
	}
	if (env != NULL) {
		for (k = 0; k < env->n; k++) {
			const char *key = env->v[k].key;

			if (key != NULL && strlen(key) == n &&
			    memcmp(key, name, n) == 0 &&
			    env->v[k].value != NULL) {
				v->val = env->v[k].value;
				v->vlen = strlen(v->val);
				return 1;
			}
		}
	}
	return builtin_var(an, name, n, v);
}

/* Returns element idx of an array value (NUL-separated), or NULL. */
static const char *
arr_elem(const struct pl_var *v, long idx, size_t *len)
{
	const char *s = v->val, *e = v->val + v->vlen;
	long k = 0;

	if (!v->isarr) {
		if (idx != 0)
			return NULL;
		*len = v->vlen;
		return v->val;
	}
	while (s <= e) {
		const char *z = memchr(s, '\0', (size_t)(e - s));

		if (z == NULL)
			z = e;
		if (k == idx) {
			*len = (size_t)(z - s);
			return s;
		}
		k++;
		s = z + 1;
	}
	return NULL;
}

/* Expands a word to one string (no splitting); false when unknown. */
static int
word_text(struct pl_an *an, struct pl_word *w, const char **s, size_t *n,
    unsigned *taint)
{
	struct pl_field f;

	if (w == NULL) {
		*s = "";
		*n = 0;
		*taint = 0;
		return 1;
	}
	if (pl_expand_single(an, w, &f) != 0)
		return 0;
	*s = f.s;
	*n = f.len;
	*taint = f.taint;
	return !(f.flags & F_UNK);
}

/* Case conversion helper. */
static char *
convcase(struct pl_an *an, const char *s, size_t n, int upper)
{
	char *o = pl_strndup(an->a, s, n);
	size_t i;

	for (i = 0; i < n; i++) {
		if (upper && o[i] >= 'a' && o[i] <= 'z')
			o[i] = (char)(o[i] - 32);
		else if (!upper && o[i] >= 'A' && o[i] <= 'Z')
			o[i] = (char)(o[i] + 32);
	}
	return o;
}

/* Removes a prefix or suffix matching a glob pattern. */
static int
strip_pat(struct pl_an *an, const char *s, size_t n, const char *pat,
    int suffix, int longest, const char **out, size_t *olen)
{
	char *tmp = pl_alloc(an->a, n + 1);
	size_t k;

	if (n > 1024)
		return 0;
	for (k = 0; k <= n; k++) {
		size_t len = longest ? n - k : k;
		const char *start = suffix ? s + n - len : s;

		memcpy(tmp, start, len);
		tmp[len] = '\0';
		if (fnmatch(pat, tmp, 0) == 0) {
			*out = suffix ? s : s + len;
			*olen = n - len;
			return 1;
		}
	}
	*out = s;
	*olen = n;
	return 1;
}

/* True for variable names that hold credentials (AWS_SECRET_ACCESS_KEY). */
static int
secret_var(const char *s, size_t n)
{
	static const char *const pats[] = { "TOKEN", "SECRET", "PASSWORD",
	    "PASSWD", "_KEY", "CREDENTIAL", NULL };
	int k;

	for (k = 0; pats[k] != NULL; k++)
		if (n >= strlen(pats[k]) && memmem(s, n, pats[k],
		    strlen(pats[k])) != NULL)
			return 1;
	return 0;
}

/* Computes the value of a parameter part; 0 when unknown. */
static int
param_value(struct pl_an *an, struct pl_part *pt, const char **val,
    size_t *vlen, unsigned *taint, int *multi)
{
	struct pl_var v;
	const char *name = pt->s, *a1, *a2;
	size_t nlen = pt->len, l1, l2;
	unsigned t1, t2;
	long idx = 0;
	int known, all = 0;
	const char *sub = memchr(name, '[', nlen);

	*taint = 0;
	*multi = 0;
	if (sub != NULL) {
		const char *ix = sub + 1;

		if (*ix == '@' || *ix == '*')
			all = 1;
		else
			idx = strtol(ix, NULL, 10);
		nlen = (size_t)(sub - name);
	}
	if (nlen == 1 && name[0] >= '0' && name[0] <= '9') {
		int k = name[0] - '0';

		if (k == 0) {
			*val = "sh";
			*vlen = 2;
			known = 1;
		} else if (an->npos >= 0 && k <= an->npos &&
		    an->pos[k - 1] != NULL) {
			*val = an->pos[k - 1];
			*vlen = strlen(*val);
			known = 1;
		} else if (an->npos >= 0 && k > an->npos) {
			*val = "";
			*vlen = 0;
			known = 1;
		} else {
			known = 0;
		}
		memset(&v, 0, sizeof(v));
		if (known) {
			v.val = *val;
			v.vlen = *vlen;
		} else if (an->npos >= 0) {
			*taint |= an->postaint;	/* set from unknown text */
		}
	} else if (nlen == 1 && (name[0] == '@' || name[0] == '*')) {
		if (an->npos >= 0) {
			struct vg_buf *b = pl_buf_get(an);
			size_t start = 0;
			int k;
			char *o;

			if (b == NULL)
				return 0;
			for (k = 0; k < an->npos && k < 9; k++) {
				const char *pv = an->pos[k] ? an->pos[k] : "\001";

				if (k > 0)
					vg_buf_addc(b, ' ');
				vg_buf_adds(b, pv);
			}
			o = pl_strndup(an->a, b->data ? b->data : "",
			    b->len - start);
			pl_buf_put(an);
			*val = o;
			*vlen = strlen(o);
			*multi = 1;
			memset(&v, 0, sizeof(v));
			v.val = o;
			v.vlen = *vlen;
			if (memchr(o, PL_UNK, *vlen) != NULL)
				*taint |= an->postaint;
			known = 1;
		} else {
			known = 0;
			memset(&v, 0, sizeof(v));
		}
	} else if (nlen == 1 && strchr("#?$!-", name[0])) {
		*val = name[0] == '#' ? "1" : name[0] == '?' ? "0" :
		    name[0] == '-' ? "hB" : "4242";
		*vlen = strlen(*val);
		memset(&v, 0, sizeof(v));
		v.val = *val;
		v.vlen = *vlen;
		known = 1;
	} else {
		known = var_lookup(an, name, nlen, &v);
		if (secret_var(name, nlen))
			*taint |= T_SECRET;
		if (known) {
			if (all && v.isarr) {
				*val = v.val;
				*vlen = v.vlen;
				*multi = 2;
			} else {
				*val = arr_elem(&v, idx, vlen);
				if (*val == NULL) {
					*val = "";
					*vlen = 0;
				}
			}
			*taint |= v.taint;
		}
	}
	if (pt->op == PO_INDIRECT) {
		if (!known) {
			*taint = T_VAR;
			return 0;
		}
		known = var_lookup(an, *val, *vlen, &v);
		if (known) {
			*val = v.val;
			*vlen = v.vlen;
			*taint |= v.taint;
		}
		if (!known)
			*taint |= T_VAR;
		return known;
	}
	switch (pt->op) {
	case PO_NONE:
		break;
	case PO_DEFAULT:
	case PO_ASSIGN:
		if (!known || (pt->colon && *vlen == 0)) {
			known = word_text(an, pt->arg, val, vlen, taint);
			if (pt->op == PO_ASSIGN && nlen > 0)
				pl_var_set(an, name, nlen, known ? *val : NULL,
				    *vlen, *taint);
		}
		return known;
	case PO_ALT:
		if (known && pt->colon && *vlen == 0) {
			*val = "";
			*vlen = 0;
			return 1;
		}
		return word_text(an, pt->arg, val, vlen, taint);
	case PO_ERROR:
		break;
	case PO_LEN:
		if (known) {
			char *d = pl_alloc(an->a, 24);
			size_t cnt = *vlen;

			if (all && v.isarr) {
				size_t k;

				cnt = 1;
				for (k = 0; k < v.vlen; k++)
					cnt += v.val[k] == '\0';
			}
			*vlen = (size_t)snprintf(d, 24, "%zu", cnt);
			*val = d;
			*multi = 0;
		}
		return known;
	case PO_RPRE:
	case PO_RPRE_L:
	case PO_RSUF:
	case PO_RSUF_L:
		if (!known)
			break;
		if (!word_text(an, pt->arg, &a1, &l1, &t1))
			return 0;
		{
			char *pat = pl_strndup(an->a, a1, l1);

			return strip_pat(an, *val, *vlen, pat,
			    pt->op == PO_RSUF || pt->op == PO_RSUF_L,
			    pt->op == PO_RPRE_L || pt->op == PO_RSUF_L,
			    val, vlen);
		}
	case PO_REPL:
	case PO_REPL_ALL:
		if (!known)
			break;
		if (!word_text(an, pt->arg, &a1, &l1, &t1) ||
		    !word_text(an, pt->arg2, &a2, &l2, &t2))
			return 0;
		if (l1 == 0 || memchr(a1, '*', l1) || memchr(a1, '?', l1) ||
		    memchr(a1, '[', l1)) {
			*taint |= T_VAR;
			return 0;
		}
		{
			struct vg_buf *b = pl_buf_get(an);
			size_t start = 0, i = 0;
			int done = 0;

			if (b == NULL)
				return 0;
			while (i < *vlen) {
				if (!done && i + l1 <= *vlen &&
				    memcmp(*val + i, a1, l1) == 0) {
					vg_buf_add(b, a2, l2);
					i += l1;
					if (pt->op == PO_REPL)
						done = 1;
					continue;
				}
				vg_buf_addc(b, (*val)[i++]);
			}
			*val = pl_strndup(an->a, b->data ? b->data : "",
			    b->len - start);
			*vlen = b->len - start;
			pl_buf_put(an);
			*taint |= t1 | t2;
		}
		return 1;
	case PO_SUBSTR:
		if (!known)
			break;
		if (!word_text(an, pt->arg, &a1, &l1, &t1))
			return 0;
		{
			char *e;
			long off = strtol(pl_strndup(an->a, a1, l1), &e, 10);
			long len = (long)*vlen;

			if (*e != '\0' && *e != ' ')
				return 0;
			if (pt->arg2 != NULL) {
				if (!word_text(an, pt->arg2, &a2, &l2, &t2))
					return 0;
				len = strtol(pl_strndup(an->a, a2, l2), &e,
				    10);
				if (*e != '\0')
					return 0;
			}
			if (off < 0)
				off += (long)*vlen;
			if (off < 0 || off > (long)*vlen)
				off = (long)*vlen;
			if (len < 0)
				len = (long)*vlen - off + len;
			if (len < 0)
				len = 0;
			if (off + len > (long)*vlen)
				len = (long)*vlen - off;
			*val += off;
			*vlen = (size_t)len;
		}
		return 1;
	case PO_UPPER:
	case PO_LOWER:
		if (!known)
			break;
		*val = convcase(an, *val, *vlen, pt->op == PO_UPPER);
		return 1;
	default:
		*taint |= T_VAR;
		return 0;
	}
	if (!known)
		*taint |= T_VAR;
	return known;
}

/* Expands the parts of a word into the field builder. */
static int
expand_parts(struct fb *f, struct pl_word *w, int assign)
{
	struct pl_an *an = f->an;
	struct pl_part *pt;
	int first = 1;

	for (pt = w->parts; pt != NULL; pt = pt->next, first = 0) {
		if (!pl_step(an, 1))
			return -1;
		switch (pt->kind) {
		case PT_LIT:
			if (pt->quote != Q_NONE) {
				f->flags |= F_QUOTED;
				if (fb_value(f, pt->s, pt->len, 1, 0) != 0)
					return -1;
			} else {
				fb_lit(f, pt->s, pt->len, first, assign);
			}
			break;
		case PT_PARAM: {
			const char *val;
			size_t vlen;
			unsigned taint;
			int multi, known;

			known = param_value(an, pt, &val, &vlen, &taint,
			    &multi);
			if (pt->quote != Q_NONE)
				f->flags |= F_QUOTED;
			if (!known) {
				if (fb_value(f, "\001", 1, 1, taint | T_VAR))
					return -1;
				break;
			}
			if (multi == 2) {
				/* "${a[@]}": one field per element. */
				const char *s = val, *e = val + vlen;

				while (s <= e) {
					const char *z = memchr(s, '\0',
					    (size_t)(e - s));

					if (z == NULL)
						z = e;
					if (fb_value(f, s, (size_t)(z - s),
					    pt->quote != Q_NONE, taint))
						return -1;
					if (z < e && fb_end(f) != 0)
						return -1;
					s = z + 1;
				}
				break;
			}
			if (fb_value(f, val, vlen, pt->quote != Q_NONE &&
			    multi == 0, taint))
				return -1;
			break;
		}
		case PT_CMDSUB: {
			struct pl_stream in, out;

			pl_stream_unknown(&in, 0);
			pl_stream_unknown(&out, 0);
			if (pt->sub != NULL)
				pl_analyse_node(an, pt->sub, &in, &out);
			if (pt->quote != Q_NONE)
				f->flags |= F_QUOTED;
			if (out.known) {
				size_t n = out.len;

				while (n > 0 && out.s[n - 1] == '\n')
					n--;
				if (fb_value(f, out.s, n, pt->quote != Q_NONE,
				    out.taint))
					return -1;
			} else {
				if (fb_value(f, "\001", 1, 1,
				    out.taint ? out.taint : T_PROG))
					return -1;
			}
			break;
		}
		case PT_ARITH: {
			struct pl_field af;

			if (pt->arg != NULL && pl_expand_single(an, pt->arg,
			    &af) != 0)
				return -1;
			if (fb_value(f, "\001", 1, 1, 0))
				return -1;
			break;
		}
		case PT_PROCIN:
		case PT_PROCOUT: {
			struct pl_stream in, *out;

			out = pl_alloc(an->a, sizeof(*out));
			pl_stream_unknown(&in, 0);
			pl_stream_unknown(out, 0);
			if (pt->sub != NULL)
				pl_analyse_node(an, pt->sub, &in, out);
			if (fb_value(f, "/dev/fd/63", 10, 1, 0))
				return -1;
			f->proc = out;
			break;
		}
		}
		if (an->over)
			return -1;
	}
	return 0;
}

/* The arena strings of fields are writable; fields hold them const. */
static char *
mut(const char *s)
{
	union {
		const char	*c;
		char		*m;
	} u = { .c = s };

	return u.m;
}

/* Replaces leftover brace markers with the characters they stand for. */
static void
unmark(char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == PL_BOPEN)
			s[i] = '{';
		else if (s[i] == PL_BCOMMA)
			s[i] = ',';
		else if (s[i] == PL_BCLOSE)
			s[i] = '}';
	}
}

/* Parses a {a..b[..s]} sequence body; returns the count or -1. */
static long
brace_seq(const char *s, size_t n, long *from, long *to, long *inc,
    int *alpha)
{
	char buf[64], *e, *d;
	long cnt;

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	d = strstr(buf, "..");
	if (d == NULL)
		return -1;
	*alpha = 0;
	*inc = 1;
	if (d == buf + 1 && d[3] == '\0' && d[2] != '\0') {
		*alpha = 1;
		*from = (unsigned char)buf[0];
		*to = (unsigned char)d[2];
	} else {
		*from = strtol(buf, &e, 10);
		if (e != d || e == buf)
			return -1;
		*to = strtol(d + 2, &e, 10);
		if (e == d + 2)
			return -1;
		if (e[0] == '.' && e[1] == '.') {
			char *e2;

			*inc = labs(strtol(e + 2, &e2, 10));
			if (e2 == e + 2 || *e2 != '\0' || *inc == 0)
				return -1;
		} else if (*e != '\0') {
			return -1;
		}
	}
	cnt = labs(*to - *from) / *inc + 1;
	return cnt;
}

static int brace_build(struct pl_an *an, struct pl_field **fv, int *n,
    int *cap, int k, int depth, const struct pl_field *srcp, struct vg_buf *b,
    int found, size_t open, size_t close, size_t pre);

/*
 * Brace-expands field k of the array in place (appending new fields);
 * the expansions replace the original.  Returns -1 over the limits.
 */
static int
brace_expand(struct pl_an *an, struct pl_field **fv, int *n, int *cap,
    int k, int depth)
{
	struct pl_field src = (*fv)[k];
	const char *s = src.s;
	size_t len = src.len, i, open = (size_t)-1, close = 0, pre;
	int lvl = 0, commas = 0, found = 0;
	struct vg_buf *b;
	int rc;

	if (depth > 32) {
		an->over = 1;
		an->overwhy = "brace expansion too deep";
		return -1;
	}
	for (i = 0; i < len && !found; i++) {
		if (s[i] == PL_BOPEN) {
			if (lvl == 0) {
				open = i;
				commas = 0;
			}
			lvl++;
		} else if (s[i] == PL_BCOMMA && lvl == 1) {
			commas++;
		} else if (s[i] == PL_BCLOSE && lvl > 0) {
			lvl--;
			if (lvl == 0) {
				close = i;
				if (commas > 0)
					found = 1;
				else {
					long f, t, inc, cnt;
					int al;

					cnt = brace_seq(s + open + 1,
					    close - open - 1, &f, &t, &inc,
					    &al);
					if (cnt > 0)
						found = 2;
				}
			}
		}
	}
	if (!found) {
		unmark(mut(src.s), src.len);
		return 0;
	}
	pre = open;
	if ((b = pl_buf_get(an)) == NULL)
		return -1;
	rc = brace_build(an, fv, n, cap, k, depth, &src, b, found, open,
	    close, pre);
	pl_buf_put(an);
	return rc;
}

/* Builds the alternatives of one brace expression (see brace_expand). */
static int
brace_build(struct pl_an *an, struct pl_field **fv, int *n, int *cap, int k,
    int depth, const struct pl_field *srcp, struct vg_buf *b, int found,
    size_t open, size_t close, size_t pre)
{
	struct pl_field src = *srcp;
	const char *s = src.s;
	size_t len = src.len, j, bstart = 0;
	int lvl;

	{
		/* Build the alternatives. */
		const char *alts[PL_MAX_BRACE];
		size_t alens[PL_MAX_BRACE];
		char *seqbuf = NULL;
		int na = 0, a;

		if (found == 1) {
			size_t st = open + 1;

			lvl = 0;
			for (j = open + 1; j <= close; j++) {
				if (s[j] == PL_BOPEN)
					lvl++;
				else if (s[j] == PL_BCLOSE && lvl > 0)
					lvl--;
				else if ((s[j] == PL_BCOMMA && lvl == 0) ||
				    j == close) {
					if (na >= PL_MAX_BRACE) {
						an->over = 1;
						an->overwhy = "brace expansion "
						    "too large";
						return -1;
					}
					alts[na] = s + st;
					alens[na++] = j - st;
					st = j + 1;
				}
			}
		} else {
			long f, t, inc, cnt, v;
			int al;
			size_t off = 0;

			cnt = brace_seq(s + open + 1, close - open - 1, &f, &t,
			    &inc, &al);
			if (cnt > PL_MAX_BRACE) {
				/* Huge ranges ({1..100000}): keep the ends,
				 * remember the size for loop estimates. */
				if (cnt > an->loopiter)
					an->loopiter = cnt;
				cnt = 2;
				inc = labs(t - f);
				if (inc == 0)
					inc = 1;
			}
			seqbuf = pl_alloc(an->a, (size_t)cnt * 24);
			for (v = f, a = 0; a < cnt; a++) {
				int w = al ? snprintf(seqbuf + off, 24, "%c",
				    (char)v) : snprintf(seqbuf + off, 24,
				    "%ld", v);

				alts[na] = seqbuf + off;
				alens[na++] = (size_t)w;
				off += (size_t)w + 1;
				v += f <= t ? inc : -inc;
			}
		}
		/* Replace field k by the first, append the rest. */
		for (a = 0; a < na; a++) {
			struct pl_field nf = src;
			char *o;

			vg_buf_add(b, s, pre);
			vg_buf_add(b, alts[a], alens[a]);
			vg_buf_add(b, s + close + 1, len - close - 1);
			o = pl_strndup(an->a, b->data + bstart, b->len -
			    bstart);
			nf.s = o;
			nf.len = b->len - bstart;
			b->len = bstart;
			b->data[bstart] = '\0';
			if (a == 0) {
				(*fv)[k] = nf;
				continue;
			}
			if (!pl_step(an, 1))
				return -1;
			if (*n >= PL_MAX_FIELDS) {
				an->over = 1;
				an->overwhy = "too many words";
				return -1;
			}
			if (*n >= *cap) {
				int ncap = *cap * 2 + 16;
				struct pl_field *nv = pl_alloc(an->a,
				    (size_t)ncap * sizeof(*nv));

				memcpy(nv, *fv, (size_t)*n * sizeof(*nv));
				*fv = nv;
				*cap = ncap;
			}
			/* Keep order: insert after k + a - 1. */
			memmove(&(*fv)[k + a + 1], &(*fv)[k + a],
			    (size_t)(*n - k - a) * sizeof(**fv));
			(*fv)[k + a] = nf;
			(*n)++;
		}
		if (!pl_step(an, na))
			return -1;
		/* Each result may hold further braces. */
		for (a = na - 1; a >= 0; a--)
			if (brace_expand(an, fv, n, cap, k + a, depth + 1))
				return -1;
	}
	return 0;
}

int
pl_expand_word(struct pl_an *an, struct pl_word *w, struct pl_field **out,
    int *n, int *cap)
{
	struct fb f = { 0 };
	int start = *n, k, has_brace;

	f.an = an;
	if ((f.b = pl_buf_get(an)) == NULL)
		return -1;
	f.out = out;
	f.n = n;
	f.cap = cap;
	if (an->spanfix) {
		f.off = an->span_off;
		f.slen = an->span_len;
	} else {
		f.off = w->off;
		f.slen = w->len;
	}
	k = expand_parts(&f, w, 0) != 0 || fb_end(&f) != 0;
	pl_buf_put(an);
	if (k)
		return -1;
	for (k = start; k < *n; k++) {
		has_brace = memchr((*out)[k].s, PL_BOPEN, (*out)[k].len) != NULL;
		if (has_brace) {
			int before = *n;

			if (brace_expand(an, out, n, cap, k, 0) != 0)
				return -1;
			k += *n - before;
		} else if (memchr((*out)[k].s, PL_BCOMMA, (*out)[k].len) ||
		    memchr((*out)[k].s, PL_BCLOSE, (*out)[k].len)) {
			unmark(mut((*out)[k].s), (*out)[k].len);
		}
	}
	for (k = start; k < *n; k++)
		unmark(mut((*out)[k].s), (*out)[k].len);
	return 0;
}

int
pl_expand_single(struct pl_an *an, struct pl_word *w, struct pl_field *out)
{
	struct fb f = { 0 };
	struct pl_field *arr = NULL;
	int n = 0, cap = 0, rc = -1;

	f.an = an;
	if ((f.b = pl_buf_get(an)) == NULL)
		return -1;
	f.out = &arr;
	f.n = &n;
	f.cap = &cap;
	f.nosplit = 1;
	f.active = 1;
	if (an->spanfix) {
		f.off = an->span_off;
		f.slen = an->span_len;
	} else {
		f.off = w->off;
		f.slen = w->len;
	}
	if (expand_parts(&f, w, 1) == 0 && fb_end(&f) == 0) {
		*out = arr[0];
		unmark(mut(out->s), out->len);
		rc = 0;
	}
	pl_buf_put(an);
	return rc;
}

/*
 * fold.c - what script code hands a command runner, folded to a constant.
 *
 * The light scan (nested.c) finds the places where python, perl, ruby,
 * node, php, lua, awk or R code runs a command (os.system, subprocess.*,
 * os.exec*, system(), backticks, qx, child_process, shell_exec,
 * os.execute, system2 ...) or runs code of its own language (exec, eval).
 * This file evaluates the argument given there as far as it is made of
 * constants: string literals and their concatenation (+, ., .., awk's
 * juxtaposition), joins of literal lists, format strings (f-strings,
 * %, .format, interpolation), variables assigned once from such an
 * expression in the same code, reversal ([::-1], reverse, strrev) and
 * the common decoders (base64, hex, rot13, chr, fromCharCode, pack).
 * A command that folds is analysed as shell, so "r"+"m -rf /" is rm -rf /;
 * one that does not is opaque code: its text is only known at run time.
 */
#include <stdio.h>
#include <string.h>

#include "common/base64.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/fold.h"

#define FV_MAX		32	/* items of a folded list */
#define FOLD_DEPTH	6	/* variables and interpolations */
#define FOLD_NEST	32	/* brackets and calls inside each other */

/* A folded value: a string (one item) or a list; NULL items unknown. */
struct fv {
	int		 n;
	int		 list;
	const char	*s[FV_MAX];
	size_t		 l[FV_MAX];
};

struct fold {
	struct pl_an	*an;
	const char	*lang;
	const char	*code;		/* the whole program */
	size_t		 clen;
	int		 depth;
	int		 nest;
};

enum { RUN_STR, RUN_LIST, RUN_FIRST, RUN_EXEC, RUN_SPAWN, RUN_CODE,
    RUN_ATTR };

/* A command runner of one language and how it takes its command. */
struct runner {
	const char	*lang;		/* NULL: every language */
	const char	*api;
	int		 how;
};

static const struct runner runners[] = {
	{ "python", "os.system(", RUN_STR },
	{ "python", "os.popen(", RUN_STR },
	{ "python", ".system(", RUN_STR },
	{ "python", "subprocess.getoutput(", RUN_STR },
	{ "python", "subprocess.getstatusoutput(", RUN_STR },
	{ "python", "commands.getoutput(", RUN_STR },
	{ "python", "subprocess.run(", RUN_FIRST },
	{ "python", "subprocess.call(", RUN_FIRST },
	{ "python", "subprocess.check_call(", RUN_FIRST },
	{ "python", "subprocess.check_output(", RUN_FIRST },
	{ "python", "subprocess.Popen(", RUN_FIRST },
	{ "python", "pty.spawn(", RUN_FIRST },
	{ "python", "os.exec", RUN_EXEC },
	{ "python", "os.spawn", RUN_SPAWN },
	{ "python", "os.posix_spawn", RUN_EXEC },
	{ "python", "asyncio.create_subprocess_shell(", RUN_STR },
	{ "python", "asyncio.create_subprocess_exec(", RUN_LIST },
	{ "python", "exec(", RUN_CODE },
	{ "python", "eval(", RUN_CODE },
	{ "python", "getattr(", RUN_ATTR },
	{ "perl", "system", RUN_LIST },
	{ "perl", "exec", RUN_LIST },
	{ "perl", "qx", RUN_STR },
	{ "perl", "`", RUN_STR },
	{ "perl", "eval", RUN_CODE },
	{ "ruby", "system", RUN_LIST },
	{ "ruby", "exec", RUN_LIST },
	{ "ruby", "spawn(", RUN_LIST },
	{ "ruby", "IO.popen(", RUN_FIRST },
	{ "ruby", "Open3.capture2(", RUN_LIST },
	{ "ruby", "Open3.capture2e(", RUN_LIST },
	{ "ruby", "Open3.capture3(", RUN_LIST },
	{ "ruby", "Open3.popen2(", RUN_LIST },
	{ "ruby", "Open3.popen2e(", RUN_LIST },
	{ "ruby", "Open3.popen3(", RUN_LIST },
	{ "ruby", "Open3.pipeline(", RUN_LIST },
	{ "ruby", "%x", RUN_STR },
	{ "ruby", "`", RUN_STR },
	{ "ruby", "eval", RUN_CODE },
	{ "node", "execSync(", RUN_FIRST },
	{ "node", "exec(", RUN_FIRST },
	{ "node", "spawnSync(", RUN_LIST },
	{ "node", "spawn(", RUN_LIST },
	{ "node", "execFileSync(", RUN_LIST },
	{ "node", "execFile(", RUN_LIST },
	{ "node", "eval(", RUN_CODE },
	{ "node", "Function(", RUN_CODE },
	{ "php", "system(", RUN_FIRST },
	{ "php", "exec(", RUN_FIRST },
	{ "php", "shell_exec(", RUN_FIRST },
	{ "php", "passthru(", RUN_FIRST },
	{ "php", "popen(", RUN_FIRST },
	{ "php", "proc_open(", RUN_FIRST },
	{ "php", "pcntl_exec(", RUN_FIRST },
	{ "php", "`", RUN_STR },
	{ "php", "eval(", RUN_CODE },
	{ "php", "assert(", RUN_CODE },
	{ "lua", "os.execute(", RUN_FIRST },
	{ "lua", "io.popen(", RUN_FIRST },
	{ "lua", "loadstring(", RUN_CODE },
	{ "lua", "load(", RUN_CODE },
	{ "awk", "system(", RUN_STR },
	{ "r", "system(", RUN_FIRST },
	{ "r", "shell(", RUN_FIRST },
	{ "r", "system2(", RUN_LIST },
	{ "r", "eval(", RUN_CODE },
};

static int fold_expr(struct fold *f, const char **pp, const char *e,
    struct fv *v);

/* Past a Python keyword naming a runner's first parameter
 * ("subprocess.run(args=[...])", "Popen(args=cmd, shell=True)"). */
static const char *
skip_keyword(const struct fold *f, const char *p, const char *e)
{
	static const char *const kw[] = { "args", "cmd", "command", NULL };
	const char *q;
	size_t k, n;

	if (strcmp(f->lang, "python") != 0)
		return p;
	q = p;
	while (q < e && (*q == ' ' || *q == '\t'))
		q++;
	for (k = 0; kw[k] != NULL; k++) {
		n = strlen(kw[k]);
		if ((size_t)(e - q) > n && memcmp(q, kw[k], n) == 0) {
			const char *r = q + n;

			while (r < e && (*r == ' ' || *r == '\t'))
				r++;
			if (r < e && *r == '=' && (r + 1 >= e || r[1] != '='))
				return r + 1;
		}
	}
	return p;
}

static int
is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static const char *
skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* True when the text at p (before e) starts with w. */
static int
at(const char *p, const char *e, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(e - p) >= n && memcmp(p, w, n) == 0;
}

static void
fv_unknown(struct fv *v)
{
	v->n = 1;
	v->list = 0;
	v->s[0] = NULL;
	v->l[0] = 0;
}

static void
fv_str(struct fold *f, struct fv *v, const char *s, size_t n)
{
	v->n = 1;
	v->list = 0;
	v->s[0] = pl_strndup(f->an->a, s, n);
	v->l[0] = n;
}

/* True when every item of v is known. */
static int
fv_known(const struct fv *v)
{
	int k;

	for (k = 0; k < v->n; k++)
		if (v->s[k] == NULL)
			return 0;
	return 1;
}

/* The items of v joined by sep into one string (unknown when any is). */
static void
fv_join(struct fold *f, struct fv *v, const char *sep, size_t sl)
{
	size_t n = 0, o = 0;
	char *t;
	int k;

	if (!fv_known(v)) {
		fv_unknown(v);
		return;
	}
	for (k = 0; k < v->n; k++)
		n += v->l[k] + (k > 0 ? sl : 0);
	t = pl_alloc(f->an->a, n + 1);
	for (k = 0; k < v->n; k++) {
		if (k > 0) {
			memcpy(t + o, sep, sl);
			o += sl;
		}
		memcpy(t + o, v->s[k], v->l[k]);
		o += v->l[k];
	}
	t[o] = '\0';
	v->n = 1;
	v->list = 0;
	v->s[0] = t;
	v->l[0] = o;
}

/* a = a followed by b (both strings). */
static void
fv_cat(struct fold *f, struct fv *a, const struct fv *b)
{
	char *t;

	if (a->list || b->list) {
		/* list + list: the items of both */
		for (int k = 0; k < b->n && a->n < FV_MAX; k++) {
			a->s[a->n] = b->s[k];
			a->l[a->n++] = b->l[k];
		}
		a->list = 1;
		return;
	}
	if (a->s[0] == NULL || b->s[0] == NULL) {
		fv_unknown(a);
		return;
	}
	t = pl_alloc(f->an->a, a->l[0] + b->l[0] + 1);
	memcpy(t, a->s[0], a->l[0]);
	memcpy(t + a->l[0], b->s[0], b->l[0]);
	t[a->l[0] + b->l[0]] = '\0';
	a->s[0] = t;
	a->l[0] += b->l[0];
}

static void
fv_reverse(struct fold *f, struct fv *v)
{
	if (v->list) {
		for (int i = 0, j = v->n - 1; i < j; i++, j--) {
			const char *s = v->s[i];
			size_t l = v->l[i];

			v->s[i] = v->s[j];
			v->l[i] = v->l[j];
			v->s[j] = s;
			v->l[j] = l;
		}
		return;
	}
	if (v->s[0] != NULL) {
		char *t = pl_alloc(f->an->a, v->l[0] + 1);

		for (size_t i = 0; i < v->l[0]; i++)
			t[i] = v->s[0][v->l[0] - 1 - i];
		t[v->l[0]] = '\0';
		v->s[0] = t;
	}
}

/* Decodes the string v: 'b' base64, 'h' hex, 'r' rot13. */
static void
fv_decode(struct fold *f, struct fv *v, int kind)
{
	const char *s = v->s[0];
	size_t n = v->l[0], o = 0;
	unsigned acc = 0;
	int bits = 0, hi = -1, d;
	char *t;

	if (v->list || s == NULL) {
		fv_unknown(v);
		return;
	}
	t = pl_alloc(f->an->a, n + 1);
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (kind == 'r') {
			if (c >= 'a' && c <= 'z')
				c = 'a' + (c - 'a' + 13) % 26;
			else if (c >= 'A' && c <= 'Z')
				c = 'A' + (c - 'A' + 13) % 26;
			t[o++] = (char)c;
		} else if (kind == 'h') {
			if ((d = vg_hexval((char)c)) < 0)
				continue;
			if (hi < 0)
				hi = d;
			else {
				t[o++] = (char)(hi * 16 + d);
				hi = -1;
			}
		} else if ((d = vg_base64_value((unsigned char)c)) >= 0) {
			acc = (acc << 6) | (unsigned)d;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				t[o++] = (char)((acc >> bits) & 0xff);
			}
		}
	}
	t[o] = '\0';
	v->s[0] = t;
	v->l[0] = o;
}

/* A number literal's value, or -1. */
static long
fv_num(const struct fv *v)
{
	long x = 0;

	if (v->list || v->s[0] == NULL || v->l[0] == 0 || v->l[0] > 9)
		return -1;
	for (size_t i = 0; i < v->l[0]; i++) {
		if (v->s[0][i] < '0' || v->s[0][i] > '9')
			return -1;
		x = x * 10 + (v->s[0][i] - '0');
	}
	return x;
}

/* Each number item of v replaced by the character it codes. */
static void
fv_chars(struct fold *f, struct fv *v)
{
	for (int k = 0; k < v->n; k++) {
		struct fv one;
		long c;
		char *t;

		one.n = 1;
		one.list = 0;
		one.s[0] = v->s[k];
		one.l[0] = v->l[k];
		if ((c = fv_num(&one)) <= 0 || c > 255) {
			v->s[k] = NULL;
			continue;
		}
		t = pl_alloc(f->an->a, 2);
		t[0] = (char)c;
		t[1] = '\0';
		v->s[k] = t;
		v->l[k] = 1;
	}
}

/*
 * The comma-separated arguments from *pp up to the closing bracket
 * close (consumed).  Keyword arguments (name=value) and option objects
 * ({...}) are left out.  Returns the number folded into args.
 */
static int
fold_args(struct fold *f, const char **pp, const char *e, char close,
    struct fv *args, int max)
{
	const char *p = *pp;
	int n = 0;

	for (;;) {
		const char *q;

		p = skip_ws(p, e);
		if (p >= e)
			break;
		if (*p == close) {
			p++;
			break;
		}
		q = p;
		while (q < e && is_word(*q))
			q++;
		if (q > p && q < e && *q == '=' && q + 1 < e && q[1] != '=') {
			/* keyword argument: skip its value */
			struct fv skip;

			q++;
			fold_expr(f, &q, e, &skip);
			p = q;
		} else if (*p == '{' || at(p, e, "function") ||
		    at(p, e, "sub ")) {
			int depth = 0;

			for (; p < e; p++) {
				if (*p == '{' || *p == '(' || *p == '[')
					depth++;
				else if ((*p == '}' || *p == ')' || *p == ']') &&
				    --depth <= 0) {
					if (depth < 0)
						break;
					p++;
					if (*(p - 1) == '}')
						break;
				}
			}
		} else if (n < max) {
			fold_expr(f, &p, e, &args[n]);
			n++;
		} else {
			struct fv skip;

			/* more than fit: the last one stands for them all,
			 * unknown */
			fold_expr(f, &p, e, &skip);
			fv_unknown(&args[max - 1]);
		}
		p = skip_ws(p, e);
		if (p < e && *p == ',')
			p++;
		else if (p < e && *p == close) {
			p++;
			break;
		} else if (p >= e || *p == ';') {
			break;
		} else {
			p++;	/* something not understood: step over it */
		}
	}
	*pp = p;
	return n;
}

/* Looks name up: the one assignment "name = EXPR" in the code. */
static void
fold_var(struct fold *f, const char *name, size_t nl, struct fv *v)
{
	const char *e = f->code + f->clen, *p = f->code, *rhs = NULL;
	int found = 0;

	fv_unknown(v);
	/* a search of the whole program: paid for by its length */
	if (nl == 0 || f->depth >= FOLD_DEPTH ||
	    !pl_step(f->an, 1 + (int)(f->clen / 256)))
		return;
	while ((p = memmem(p, (size_t)(e - p), name, nl)) != NULL) {
		const char *q = p + nl;

		if ((p > f->code && (is_word(p[-1]) || p[-1] == '.' ||
		    (p[-1] == '$' && name[0] != '$'))) ||
		    (q < e && is_word(*q))) {
			p += nl;
			continue;
		}
		q = skip_ws(q, e);
		if (q < e && *q == '=' && (q + 1 >= e || (q[1] != '=' &&
		    q[1] != '~'))) {
			rhs = q + 1;
			found++;
		} else if (q + 1 < e && q[1] == '=' && strchr("+-*/.|&^%", *q) &&
		    *q != '\0') {
			found += 2;	/* changed after: not a constant */
		}
		p += nl;
	}
	if (found != 1)
		return;
	f->depth++;
	fold_expr(f, &rhs, e, v);
	f->depth--;
}

/* t (o bytes used) with s appended, room for rest more bytes. */
static char *
grow_cat(struct fold *f, char *t, size_t o, const char *s, size_t l,
    size_t rest)
{
	char *n = pl_alloc(f->an->a, o + l + rest + 1);

	memcpy(n, t, o);
	memcpy(n + o, s, l);
	return n;
}

/* A string literal at *pp with its quote (and any prefix) at p. */
static void
fold_string(struct fold *f, const char **pp, const char *e, struct fv *v)
{
	const char *p = *pp, *st;
	char quote;
	int fstr = 0, raw = 0, interp;
	char *t;
	size_t o = 0;

	while (p < e && (*p == 'f' || *p == 'F' || *p == 'r' || *p == 'R' ||
	    *p == 'b' || *p == 'B' || *p == 'u')) {
		if (*p == 'f' || *p == 'F')
			fstr = 1;
		if (*p == 'r' || *p == 'R')
			raw = 1;
		p++;
	}
	quote = *p++;
	interp = fstr || quote == '`' || (quote == '"' &&
	    (strcmp(f->lang, "perl") == 0 || strcmp(f->lang, "php") == 0 ||
	    strcmp(f->lang, "ruby") == 0));
	st = p;
	while (p < e && *p != quote)
		p += (*p == '\\' && p + 1 < e) ? 2 : 1;
	t = pl_alloc(f->an->a, (size_t)(p - st) + 1);
	*pp = p < e ? p + 1 : e;
	v->n = 1;
	v->list = 0;
	for (const char *q = st; q < p; q++) {
		const char *ne = NULL, *ns = NULL;

		if (*q == '\\' && q + 1 < p && !raw) {
			q++;
			t[o++] = *q == 'n' ? '\n' : *q == 't' ? '\t' : *q;
			continue;
		}
		if (!interp) {
			t[o++] = *q;
			continue;
		}
		if (fstr && (*q == '{' || *q == '}') && q + 1 < p &&
		    q[1] == *q) {
			t[o++] = *q++;	/* {{ and }} in f-strings */
			continue;
		}
		/* {x} in f-strings, ${x} in templates, #{x} in ruby, $x in
		 * perl and php */
		if (fstr && *q == '{') {
			ns = q + 1;
			ne = memchr(ns, '}', (size_t)(p - ns));
		} else if ((*q == '$' || *q == '#') && q + 1 < p &&
		    q[1] == '{' && (*q == '#' || quote == '`' ||
		    strcmp(f->lang, "perl") == 0)) {
			ns = q + 2;
			ne = memchr(ns, '}', (size_t)(p - ns));
			if (*q == '$' && strcmp(f->lang, "perl") == 0)
				ns = q;	/* ${x} is $x */
		} else if (*q == '$' && q + 1 < p && (is_word(q[1]) ||
		    q[1] == '{') && (quote != '`' ||
		    strcmp(f->lang, "node") != 0)) {
			ns = q;
			ne = q + 1;
			while (ne < p && is_word(*ne))
				ne++;
			if (ne < p && (*ne == '[' || *ne == '{'))
				ne = NULL;	/* $x[0], $ENV{...}: unknown */
		} else if (*q == '$' && quote == '`' &&
		    strcmp(f->lang, "node") != 0) {
			ne = NULL;
			ns = q;
		}
		if (ns == NULL) {
			t[o++] = *q;
			continue;
		}
		if (ne == NULL) {
			fv_unknown(v);
			return;
		}
		{
			struct fv iv;
			const char *x = ns;

			if (ns[0] == '$' && ns[1] == '{') {
				/* perl ${x} */
				char *nm = pl_alloc(f->an->a, (size_t)(ne - ns));

				nm[0] = '$';
				memcpy(nm + 1, ns + 2, (size_t)(ne - ns - 2));
				fold_var(f, nm, (size_t)(ne - ns - 1), &iv);
			} else if (*ns == '$') {
				fold_var(f, ns, (size_t)(ne - ns), &iv);
			} else {
				f->depth++;
				if (f->depth < FOLD_DEPTH)
					fold_expr(f, &x, ne, &iv);
				else
					fv_unknown(&iv);
				f->depth--;
			}
			if (iv.list)
				fv_join(f, &iv, " ", 1);
			if (iv.s[0] == NULL) {
				fv_unknown(v);
				return;
			}
			t = grow_cat(f, t, o, iv.s[0], iv.l[0],
			    (size_t)(p - q));
			o += iv.l[0];
			q = (*ne == '}') ? ne : ne - 1;
		}
	}
	t[o] = '\0';
	v->s[0] = t;
	v->l[0] = o;
}

/* Python's "fmt % args" and "fmt".format(args): %s, %d, {} and {N}. */
static void
fv_format(struct fold *f, struct fv *fmt, struct fv *args, int braces)
{
	const char *s = fmt->s[0];
	size_t n = fmt->l[0], o = 0, room;
	int next = 0;
	char *t;

	if (fmt->list || s == NULL || !fv_known(args)) {
		fv_unknown(fmt);
		return;
	}
	room = n + 1;
	for (int k = 0; k < args->n; k++)
		room += args->l[k] * (size_t)(1 + (braces ? 1 : 0)) * 2;
	t = pl_alloc(f->an->a, room + 1);
	for (size_t i = 0; i < n; i++) {
		int idx = -1;

		if (!braces && s[i] == '%' && i + 1 < n) {
			if (s[i + 1] == '%') {
				t[o++] = '%';
				i++;
				continue;
			}
			if (strchr("sdirf", s[i + 1]) != NULL) {
				idx = next++;
				i++;
			}
		} else if (braces && s[i] == '{' && i + 1 < n) {
			size_t j = i + 1;

			if (s[j] == '}') {
				idx = next++;
				i = j;
			} else if (s[j] >= '0' && s[j] <= '9' && j + 1 < n &&
			    s[j + 1] == '}') {
				idx = s[j] - '0';
				i = j + 1;
			} else {
				fv_unknown(fmt);
				return;
			}
		}
		if (idx < 0) {
			t[o++] = s[i];
			continue;
		}
		if (idx >= args->n || o + args->l[idx] > room) {
			fv_unknown(fmt);
			return;
		}
		memcpy(t + o, args->s[idx], args->l[idx]);
		o += args->l[idx];
	}
	t[o] = '\0';
	fmt->s[0] = t;
	fmt->l[0] = o;
}

/* The items of the n values in args, lists flattened, into v. */
static void
fv_flatten(struct fv *v, const struct fv *args, int n)
{
	v->n = 0;
	v->list = 1;
	for (int k = 0; k < n; k++)
		for (int j = 0; j < args[k].n && v->n < FV_MAX; j++) {
			v->s[v->n] = args[k].s[j];
			v->l[v->n++] = args[k].l[j];
		}
}

/* True when the argument text of a call starts with word w. */
static int
name_is(const char *nm, size_t nl, const char *w)
{
	size_t wl = strlen(w);

	return nl >= wl && memcmp(nm + nl - wl, w, wl) == 0 &&
	    (nl == wl || !is_word(nm[nl - wl - 1]));
}

/* A call of a function the folder knows: name(args). */
static void
fold_call(struct fold *f, const char *nm, size_t nl, const char **pp,
    const char *e, struct fv *v)
{
	struct fv *args = pl_alloc(f->an->a, FV_MAX * sizeof(*args));
	const char *p = *pp;
	int n;

	fv_unknown(v);
	if (name_is(nm, nl, "map") && at(skip_ws(p, e), e, "chr")) {
		/* map(chr, [...]) */
		p = skip_ws(p, e) + 3;
		p = skip_ws(p, e);
		if (p < e && *p == ',')
			p++;
	}
	n = fold_args(f, &p, e, ')', args, FV_MAX);
	*pp = p;
	if (name_is(nm, nl, "map") && n == 1) {
		*v = args[0];
		fv_chars(f, v);
		return;
	}
	if (name_is(nm, nl, "join") && n >= 2 && !args[0].list) {
		fv_flatten(v, args + 1, n - 1);
		if (args[0].s[0] != NULL)
			fv_join(f, v, args[0].s[0], args[0].l[0]);
		else
			fv_unknown(v);
		return;
	}
	if (name_is(nm, nl, "paste") || name_is(nm, nl, "paste0")) {
		fv_flatten(v, args, n);
		fv_join(f, v, nm[nl - 1] == '0' ? "" : " ",
		    nm[nl - 1] == '0' ? 0 : 1);
		return;
	}
	if (nl == 1 && nm[0] == 'c' && strcmp(f->lang, "r") == 0) {
		fv_flatten(v, args, n);
		return;
	}
	if (name_is(nm, nl, "fromCharCode") || name_is(nm, nl, "chr")) {
		fv_flatten(v, args, n);
		fv_chars(f, v);
		fv_join(f, v, "", 0);
		return;
	}
	if (n < 1)
		return;
	*v = args[0];
	if (name_is(nm, nl, "b64decode") || name_is(nm, nl, "decode_base64") ||
	    name_is(nm, nl, "base64_decode") || name_is(nm, nl, "atob") ||
	    name_is(nm, nl, "decodebytes") || name_is(nm, nl, "decode64"))
		fv_decode(f, v, 'b');
	else if (name_is(nm, nl, "fromhex") || name_is(nm, nl, "unhexlify") ||
	    name_is(nm, nl, "hex2bin"))
		fv_decode(f, v, 'h');
	else if (name_is(nm, nl, "str_rot13"))
		fv_decode(f, v, 'r');
	else if (name_is(nm, nl, "strrev") || name_is(nm, nl, "reverse")) {
		fv_flatten(v, args, n);
		fv_join(f, v, "", 0);
		fv_reverse(f, v);
	} else if (name_is(nm, nl, "pack") && n == 2 && args[0].s[0] != NULL &&
	    (strcmp(args[0].s[0], "H*") == 0 || strcmp(args[0].s[0], "H") ==
	    0)) {
		*v = args[1];
		fv_decode(f, v, 'h');
	} else if ((name_is(nm, nl, "codecs.decode") ||
	    name_is(nm, nl, "Buffer.from")) && n == 2) {
		const char *k = args[1].s[0];

		if (k == NULL || args[1].list)
			fv_unknown(v);
		else if (strncmp(k, "rot", 3) == 0)
			fv_decode(f, v, 'r');
		else if (strcmp(k, "hex") == 0)
			fv_decode(f, v, 'h');
		else if (strncmp(k, "base64", 6) == 0)
			fv_decode(f, v, 'b');
		else if (strncmp(k, "utf", 3) != 0)
			fv_unknown(v);
	} else if (!(name_is(nm, nl, "split") || name_is(nm, nl, "str") ||
	    name_is(nm, nl, "String") || name_is(nm, nl, "Buffer.from") ||
	    name_is(nm, nl, "bytes") || name_is(nm, nl, "list") ||
	    name_is(nm, nl, "tuple"))) {
		fv_unknown(v);
	}
}

/* Methods applied after a value: [::-1], .join(), .decode() ... */
static void
fold_postfix(struct fold *f, const char **pp, const char *e, struct fv *v)
{
	const char *p = *pp;

	for (int guard = 0; guard < 16; guard++) {
		const char *q;
		struct fv args[2];
		int n;

		if (at(p, e, "[::-1]")) {
			fv_reverse(f, v);
			p += 6;
			continue;
		}
		if (p < e && *p == '[') {
			struct fv idx;

			p++;
			fold_expr(f, &p, e, &idx);
			p = skip_ws(p, e);
			if (p < e && *p == ']')
				p++;
			if (v->list && fv_num(&idx) >= 0 && fv_num(&idx) <
			    v->n) {
				long i = fv_num(&idx);

				v->s[0] = v->s[i];
				v->l[0] = v->l[i];
				v->n = 1;
				v->list = 0;
			} else {
				fv_unknown(v);
			}
			continue;
		}
		if (p >= e || *p != '.' || p + 1 >= e || !is_word(p[1]))
			break;
		q = p + 1;
		while (q < e && is_word(*q))
			q++;
		n = 0;
		{
			const char *m = p + 1;
			size_t ml = (size_t)(q - m);

			p = q;
			if (p < e && *p == '(') {
				p++;
				n = fold_args(f, &p, e, ')', args, 2);
			}
			if ((ml == 4 && memcmp(m, "join", 4) == 0)) {
				if (v->list) {
					const char *sep = strcmp(f->lang,
					    "node") == 0 ? "," : "";

					if (n >= 1 && args[0].s[0] != NULL)
						fv_join(f, v, args[0].s[0],
						    args[0].l[0]);
					else if (n == 0)
						fv_join(f, v, sep, strlen(sep));
					else
						fv_unknown(v);
				} else if (n == 1 && v->s[0] != NULL) {
					struct fv sep = *v;

					*v = args[0];
					v->list = 1;
					fv_join(f, v, sep.s[0], sep.l[0]);
				} else {
					fv_unknown(v);
				}
			} else if ((ml == 7 && memcmp(m, "reverse", 7) == 0)) {
				fv_reverse(f, v);
			} else if (ml == 6 && memcmp(m, "format", 6) == 0) {
				struct fv all;

				fv_flatten(&all, args, n);
				fv_format(f, v, &all, 1);
			} else if (ml == 5 && memcmp(m, "split", 5) == 0 &&
			    n == 1 && args[0].l[0] == 0 && args[0].s[0] !=
			    NULL && !v->list && v->s[0] != NULL) {
				/* "abc".split("") */
				struct fv c;
				size_t i;

				c.n = 0;
				c.list = 1;
				for (i = 0; i < v->l[0] && c.n < FV_MAX; i++) {
					c.s[c.n] = v->s[0] + i;
					c.l[c.n++] = 1;
				}
				*v = i == v->l[0] ? c : *v;
				if (i != v->l[0])
					fv_unknown(v);
			} else if (!((ml == 6 && (memcmp(m, "decode", 6) == 0 ||
			    memcmp(m, "encode", 6) == 0)) ||
			    (ml == 8 && memcmp(m, "toString", 8) == 0) ||
			    (ml == 5 && memcmp(m, "strip", 5) == 0) ||
			    (ml == 4 && memcmp(m, "trim", 4) == 0) ||
			    (ml == 4 && memcmp(m, "to_s", 4) == 0))) {
				fv_unknown(v);
			}
		}
	}
	*pp = p;
}

/* One operand: a literal, a list, a call, a variable, with its methods. */
static void
fold_primary(struct fold *f, const char **pp, const char *e, struct fv *v)
{
	const char *p = skip_ws(*pp, e), *st;
	int py = strcmp(f->lang, "python") == 0;

	fv_unknown(v);
	if (p >= e) {
		*pp = p;
		return;
	}
	if (*p == '\'' || *p == '"' || (*p == '`' && strcmp(f->lang,
	    "node") == 0) || (py && p + 1 < e && strchr("fFrRbBu", *p) &&
	    (p[1] == '\'' || p[1] == '"' || (p + 2 < e &&
	    strchr("fFrRbB", p[1]) && (p[2] == '\'' || p[2] == '"'))))) {
		fold_string(f, &p, e, v);
	} else if (*p == '[' || *p == '(') {
		struct fv *items = pl_alloc(f->an->a, FV_MAX *
		    sizeof(*items));
		int n;
		char close = *p == '[' ? ']' : ')';

		p++;
		n = fold_args(f, &p, e, close, items, FV_MAX);
		if (close == ')' && n == 1)
			*v = items[0];
		else
			fv_flatten(v, items, n);
	} else if (*p >= '0' && *p <= '9') {
		st = p;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		fv_str(f, v, st, (size_t)(p - st));
	} else if (is_word(*p) || *p == '$') {
		st = p;
		if (*p == '$')
			p++;
		while (p < e && (is_word(*p) || (*p == '.' && p + 1 < e &&
		    is_word(p[1]))))
			p++;
		if (p < e && *p == '(') {
			p++;
			fold_call(f, st, (size_t)(p - 1 - st), &p, e, v);
		} else if (name_is(st, (size_t)(p - st), "scalar")) {
			fold_primary(f, &p, e, v);
		} else if (name_is(st, (size_t)(p - st), "reverse") &&
		    strcmp(f->lang, "perl") == 0) {
			fold_primary(f, &p, e, v);
			fv_join(f, v, "", 0);
			fv_reverse(f, v);
		} else if (p < e && *p == '{') {
			v->s[0] = NULL;	/* $ENV{X}, $h{k} */
			while (p < e && *p != '}')
				p++;
			if (p < e)
				p++;
		} else {
			fold_var(f, st, (size_t)(p - st), v);
		}
	} else {
		*pp = p;
		return;
	}
	fold_postfix(f, &p, e, v);
	*pp = p;
}

/* An expression: operands joined by the language's concatenation. */
static int
fold_expr(struct fold *f, const char **pp, const char *e, struct fv *v)
{
	const char *p = *pp;
	int perl = strcmp(f->lang, "perl") == 0 || strcmp(f->lang, "php") == 0;
	int awk = strcmp(f->lang, "awk") == 0, guard = 0;

	if (!pl_step(f->an, 1) || f->nest >= FOLD_NEST) {
		fv_unknown(v);
		return 0;
	}
	f->nest++;
	fold_primary(f, &p, e, v);
	while (guard++ < 64) {
		const char *q = skip_ws(p, e);
		struct fv r;

		if (q >= e)
			break;
		if ((*q == '+' && q + 1 < e && q[1] != '=' && q[1] != '+') ||
		    (perl && *q == '.' && q + 1 < e && q[1] != '=' &&
		    q[1] != '.') || (strcmp(f->lang, "lua") == 0 &&
		    at(q, e, ".."))) {
			q += (*q == '.' && q[1] == '.') ? 2 : 1;
			fold_primary(f, &q, e, &r);
			fv_cat(f, v, &r);
			p = q;
		} else if (*q == '%' && strcmp(f->lang, "python") == 0) {
			q++;
			fold_primary(f, &q, e, &r);
			if (!r.list) {
				r.list = 1;
			}
			fv_format(f, v, &r, 0);
			p = q;
		} else if (awk && q > p && (*q == '"' || is_word(*q) ||
		    *q == '$') && !at(q, e, "in ")) {
			fold_primary(f, &q, e, &r);
			fv_cat(f, v, &r);
			p = q;
		} else {
			break;
		}
	}
	f->nest--;
	*pp = p;
	return fv_known(v);
}

/* Shell text for an argument vector; 0 when the program is unknown. */
static char *
argv_text(struct fold *f, const struct fv *v, size_t *len)
{
	struct vg_buf b;
	char *r;

	if (v->n == 0 || v->s[0] == NULL)
		return NULL;
	vg_buf_init(&b);
	for (int k = 0; k < v->n; k++) {
		if (k > 0)
			vg_buf_addc(&b, ' ');
		if (v->s[k] == NULL)
			vg_buf_adds(&b, "\"${__vigil_unknown}\"");
		else if (memchr(v->s[k], '\0', v->l[k]) != NULL)
			vg_buf_adds(&b, "\"${__vigil_unknown}\"");
		else
			vg_buf_shquote(&b, pl_strndup(f->an->a, v->s[k],
			    v->l[k]));
	}
	r = pl_strndup(f->an->a, b.data ? b.data : "", b.len);
	*len = b.len;
	vg_buf_release(&b);
	return r;
}

static void
opaque(struct fold *f, const char *api, size_t off, size_t slen)
{
	pl_find_floor(f->an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
	    "builtin:opaque-script-command", off, slen,
	    "%s code runs a command or code built at run time ('%.*s' is "
	    "given text the gate cannot compute)", f->lang,
	    (int)strcspn(api, "("), api);
}

/* The argument of one runner at p, judged. */
static const char *
judge_runner(struct fold *f, const struct runner *r, const char *p,
    const char *e, size_t off, size_t slen, pl_code_scan_fn code_scan)
{
	struct fv *args = pl_alloc(f->an->a, FV_MAX * sizeof(*args)), v;
	struct pl_stream in, out;
	int n = 0, close = 0;
	const char *text = NULL;
	size_t len = 0;
	int drop_env = 0;

	if (r->how == RUN_EXEC || r->how == RUN_SPAWN) {
		/* os.execvpe(: the letters name the form */
		while (p < e && is_word(*p))
			drop_env |= *p++ == 'e';
	}
	if (r->api[0] == '`' || r->api[0] == 'q' || r->api[0] == '%') {
		/* `cmd`, qx{cmd}, %x(cmd): an interpolating string */
		char open = r->api[0] == '`' ? '`' : (p < e ? *p : 0);

		if (open == 0 || is_word(open) || open == ' ')
			return p;
		close = open == '(' ? ')' : open == '{' ? '}' : open == '[' ?
		    ']' : open;
		{
			const char *st = r->api[0] == '`' ? p : p + 1;
			const char *q = memchr(st, close, (size_t)(e - st));
			char *t;
			const char *tp;

			if (q == NULL)
				return e;
			/* copy into a "..." string for fold_string */
			t = pl_alloc(f->an->a, (size_t)(q - st) + 3);
			t[0] = '`';
			memcpy(t + 1, st, (size_t)(q - st));
			t[q - st + 1] = '`';
			t[q - st + 2] = '\0';
			tp = t;
			fold_string(f, &tp, t + (q - st) + 2, &v);
			p = q + 1;
		}
		goto judge_str;
	}
	p = skip_ws(p, e);
	if (r->api[strlen(r->api) - 1] == '(' || (p < e && *p == '(')) {
		if (r->api[strlen(r->api) - 1] != '(')
			p++;
		p = skip_keyword(f, p, e);
		n = fold_args(f, &p, e, ')', args, FV_MAX);
	} else if (p < e && (r->how == RUN_LIST || r->how == RUN_CODE)) {
		const char *st = p, *q = p;

		if (*p == '{' || *p == '=' || *p == ';' || *p == ')')
			return p;	/* eval { block }, a name */
		while (q < e && *q != ';' && *q != '\n' && *q != '}')
			q++;
		n = fold_args(f, &st, q, ';', args, FV_MAX);
		p = q;
	} else {
		return p;
	}
	if (n == 0)
		return p;
	switch (r->how) {
	case RUN_ATTR: {
		/* getattr(os, NAME): a runner chosen by a computed name */
		static const char *const names[] = { "system", "popen",
		    "exec", "spawn", "run", "call", "check_", "Popen",
		    "getoutput", "getstatusoutput", NULL };

		if (n < 2)
			return p;
		for (int k = 0; args[1].s[0] != NULL && !args[1].list &&
		    names[k] != NULL; k++)
			if (strncmp(args[1].s[0], names[k],
			    strlen(names[k])) == 0)
				args[1].s[0] = NULL;
		if (args[1].list || args[1].s[0] == NULL)
			opaque(f, r->api, off, slen);
		return p;
	}
	case RUN_EXEC:
	case RUN_SPAWN: {
		struct fv *a = args + (r->how == RUN_SPAWN ? 1 : 0);
		int m = n - (r->how == RUN_SPAWN ? 1 : 0) - drop_env;

		if (m < 1)
			return p;
		fv_flatten(&v, a + 1, m - 1);
		if (v.n == 0) {
			v.n = 1;
		}
		v.s[0] = a[0].list ? NULL : a[0].s[0];
		v.l[0] = a[0].l[0];
		goto judge_argv;
	}
	case RUN_LIST:
		if (n == 1 && !args[0].list) {
			v = args[0];
			goto judge_str;
		}
		fv_flatten(&v, args, n);
		goto judge_argv;
	case RUN_CODE:
		if (args[0].list || args[0].s[0] == NULL) {
			opaque(f, r->api, off, slen);
			return p;
		}
		if (f->an->nest < PL_MAX_NEST) {
			f->an->nest++;
			code_scan(f->an, f->lang, args[0].s[0], args[0].l[0],
			    off, slen);
			f->an->nest--;
		}
		return p;
	default:
		v = args[0];
		if (v.list)
			goto judge_argv;
		goto judge_str;
	}
judge_str:
	if (v.list || v.s[0] == NULL) {
		opaque(f, r->api, off, slen);
		return p;
	}
	text = v.s[0];
	len = v.l[0];
	goto analyse;
judge_argv:
	if ((text = argv_text(f, &v, &len)) == NULL) {
		opaque(f, r->api, off, slen);
		return p;
	}
analyse:
	if (memchr(text, '\0', len) != NULL) {
		opaque(f, r->api, off, slen);	/* decoded to binary */
		return p;
	}
	pl_stream_unknown(&in, 0);
	pl_analyse_text(f->an, text, len, off, slen, &in, &out);
	return p;
}

void
pl_fold_runners(struct pl_an *an, const char *lang, const char *code,
    size_t len, size_t off, size_t slen, pl_code_scan_fn code_scan)
{
	struct fold f = { an, lang, code, len, 0, 0 };
	const char *e = code + len;
	int node_cp = strcmp(lang, "node") != 0 ||
	    memmem(code, len, "child_process", 13) != NULL;
	size_t k;

	for (k = 0; k < sizeof(runners) / sizeof(runners[0]); k++) {
		const struct runner *r = &runners[k];
		const char *p = code;
		size_t al = strlen(r->api);
		int guard = 0;

		if (strcmp(r->lang, lang) != 0 || (!node_cp &&
		    r->how != RUN_CODE))
			continue;
		while (p < e && (p = memmem(p, (size_t)(e - p), r->api,
		    al)) != NULL && guard++ < 16) {
			const char *q = p + al;

			/* a whole name: not "filesystem(", "executable",
			 * "re.exec(" for a bare function; but Ruby's
			 * "Kernel.system" is the bare one */
			if (is_word(r->api[0]) && p > code &&
			    !(strcmp(lang, "ruby") == 0 && p - code >= 7 &&
			    memcmp(p - 7, "Kernel.", 7) == 0) &&
			    (is_word(p[-1]) || (p[-1] == '.' &&
			    (r->how == RUN_CODE || strcmp(lang, "perl") == 0 ||
			    strcmp(lang, "ruby") == 0)) || p[-1] == '$' ||
			    p[-1] == '@' || p[-1] == '%' || p[-1] == '-' ||
			    p[-1] == '>')) {
				p = q;
				continue;
			}
			if (is_word(r->api[al - 1]) && q < e && is_word(*q) &&
			    r->how != RUN_EXEC && r->how != RUN_SPAWN) {
				p = q;
				continue;
			}
			p = judge_runner(&f, r, q, e, off, slen, code_scan);
			if (p <= q - al + 1)
				p = q;
		}
	}
}

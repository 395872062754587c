/*
 * parse.c - a POSIX sh / bash parser producing the syntax tree the policy
 * analyser walks: lists, pipelines, simple commands with assignments,
 * words and redirections, subshells, groups, functions, if/while/until/
 * for/select/case, (( )) and [[ ]].  Words keep their structure (quoted
 * and unquoted literals, parameters with their operators, command,
 * arithmetic and process substitutions) so that expansion (expand.c) can
 * resolve them; $'..' escapes are decoded here.  Here-document bodies are
 * read at the next newline, as the shell does.
 *
 * The parser never executes anything.  It is deliberately forgiving where
 * bash is (an unterminated here-doc ends at the end of the text) and
 * strict where the meaning would be unclear (unterminated quotes or
 * substitutions are errors), because the caller denies what does not
 * parse.  Nesting depth and a step budget bound the work on hostile input.
 */
#include <string.h>

#include "runner/policy/parse.h"
#include "runner/policy/arena.h"
#include "runner/policy/bounds.h"

#define MAX_PENDING 16

struct ps {
	struct pl_arena	*a;
	const char	*s;
	size_t		 len;		/* parse limit */
	size_t		 i;
	int		 depth;
	int		*work;
	struct pl_parse_err *err;
	int		 failed;
	struct pl_redir	*pending[MAX_PENDING];
	const char	*pdelim[MAX_PENDING];
	size_t		 pdlen[MAX_PENDING];
	int		 pstrip[MAX_PENDING];
	int		 npending;
	int		 fix;		/* spans fixed (backtick bodies) */
	size_t		 fix_off;
	size_t		 fix_len;
	int		 ctxparen;	/* inside $( ) or ( ): ')' ends */
};

static struct pl_node *parse_list(struct ps *p);
static struct pl_node *parse_command(struct ps *p);
static struct pl_word *parse_word(struct ps *p, int cond);
static int parse_dollar(struct ps *p, struct pl_part **tail, int quote);

/* Records the first error; always returns NULL for convenience. */
static void *
fail(struct ps *p, const char *msg)
{
	if (!p->failed) {
		p->failed = 1;
		p->err->off = p->i;
		p->err->msg = msg;
	}
	return NULL;
}

/* Consumes one step of the budget; false when it is exhausted. */
static int
step(struct ps *p)
{
	if (--*p->work < 0) {
		fail(p, "too complex (expansion limit)");
		return 0;
	}
	return 1;
}

/* Sets a span, or the fixed span inside backtick bodies. */
static void
setspan(struct ps *p, size_t *off, size_t *len, size_t start)
{
	if (p->fix) {
		*off = p->fix_off;
		*len = p->fix_len;
	} else {
		*off = start;
		*len = p->i > start ? p->i - start : 0;
	}
}

static int
peekc(const struct ps *p, size_t k)
{
	return p->i + k < p->len ? (unsigned char)p->s[p->i + k] : -1;
}

/* Shell metacharacters that end an unquoted word. */
static int
is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	    c == '|' || c == '<' || c == '>' || c == '(' || c == ')' ||
	    c == -1;
}

static int
is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Skips blanks, line continuations and comments (not newlines). */
static void
skip_blanks(struct ps *p)
{
	int c;

	for (;;) {
		c = peekc(p, 0);
		if (c == ' ' || c == '\t' || c == '\r') {
			p->i++;
		} else if (c == '\\' && peekc(p, 1) == '\n') {
			p->i += 2;
		} else if (c == '#') {
			while (p->i < p->len && p->s[p->i] != '\n')
				p->i++;
		} else {
			return;
		}
	}
}

/* Reads the bodies of pending here-documents after a newline. */
static void
read_heredocs(struct ps *p)
{
	int k;

	for (k = 0; k < p->npending && !p->failed; k++) {
		struct pl_redir *r = p->pending[k];
		const char *d = p->pdelim[k];
		size_t dl = p->pdlen[k], start = p->i, end, ls, le, ts;
		struct pl_part *pt;
		struct ps sub;

		end = p->len;
		while (p->i < p->len) {
			ls = p->i;
			le = ls;
			while (le < p->len && p->s[le] != '\n')
				le++;
			ts = ls;
			if (p->pstrip[k])
				while (ts < le && p->s[ts] == '\t')
					ts++;
			p->i = le < p->len ? le + 1 : le;
			if (le - ts == dl && memcmp(p->s + ts, d, dl) == 0) {
				end = ls;
				break;
			}
		}
		r->target = pl_alloc(p->a, sizeof(*r->target));
		setspan(p, &r->target->off, &r->target->len, start);
		if (r->quoted) {
			pt = pl_alloc(p->a, sizeof(*pt));
			pt->kind = PT_LIT;
			pt->quote = Q_SINGLE;
			pt->s = p->s + start;
			pt->len = end - start;
			r->target->parts = pt;
			continue;
		}
		/* Unquoted: $ and ` expand, backslash escapes $ ` \ only. */
		sub = *p;
		sub.i = start;
		sub.len = end;
		sub.npending = 0;
		{
			struct pl_part head = { 0 }, *tail = &head;
			size_t lit;

			while (sub.i < sub.len && !sub.failed && step(&sub)) {
				int c = peekc(&sub, 0);

				if (c == '$' || c == '`') {
					if (parse_dollar(&sub, &tail, Q_DOUBLE))
						break;
					continue;
				}
				lit = sub.i;
				if (c == '\\' && sub.i + 1 < sub.len &&
				    strchr("$`\\", sub.s[sub.i + 1]) != NULL) {
					lit = ++sub.i;
					sub.i++;
				} else {
					sub.i++;
					while (sub.i < sub.len &&
					    sub.s[sub.i] != '$' &&
					    sub.s[sub.i] != '`' &&
					    sub.s[sub.i] != '\\')
						sub.i++;
				}
				pt = pl_alloc(p->a, sizeof(*pt));
				pt->kind = PT_LIT;
				pt->quote = Q_DOUBLE;
				pt->s = sub.s + lit;
				pt->len = sub.i - lit;
				tail->next = pt;
				tail = pt;
			}
			r->target->parts = head.next;
		}
		if (sub.failed) {
			p->failed = 1;
			*p->err = *sub.err;
		}
	}
	p->npending = 0;
}

/* Consumes one newline and reads pending here-doc bodies. */
static void
eat_newline(struct ps *p)
{
	p->i++;
	if (p->npending > 0)
		read_heredocs(p);
}

/* Skips blanks and newlines. */
static void
skip_space(struct ps *p)
{
	for (;;) {
		skip_blanks(p);
		if (peekc(p, 0) == '\n')
			eat_newline(p);
		else
			return;
	}
}

/* True when an unquoted reserved word kw starts here. */
static int
at_kw(const struct ps *p, const char *kw)
{
	size_t n;

	/* Most calls fail at the first byte: test it before the length. */
	if (p->i >= p->len || p->s[p->i] != kw[0])
		return 0;
	n = strlen(kw);
	if (p->i + n > p->len || memcmp(p->s + p->i, kw, n) != 0)
		return 0;
	if (n == 1 && (kw[0] == '{' || kw[0] == '}' || kw[0] == '!')) {
		int c = p->i + n < p->len ? (unsigned char)p->s[p->i + n] : -1;

		return c == -1 || c == ' ' || c == '\t' || c == '\n' ||
		    c == ';' || c == '&' || c == '|' || c == ')' || c == '(' ||
		    c == '<' || c == '>' || c == '\r';
	}
	return is_meta(p->i + n < p->len ? (unsigned char)p->s[p->i + n] :
	    -1) || p->s[p->i + n] == '\r';
}

/* Consumes reserved word kw or fails with msg. */
static int
expect_kw(struct ps *p, const char *kw, const char *msg)
{
	skip_space(p);
	if (!at_kw(p, kw)) {
		fail(p, msg);
		return 0;
	}
	p->i += strlen(kw);
	return 1;
}

/* Words that end a list when they appear in command position. */
static int
at_list_end(struct ps *p)
{
	static const char *const kws[] = { "then", "else", "elif", "fi",
	    "do", "done", "esac", "}", NULL };
	int c = peekc(p, 0), k;

	if (c == -1 || c == ')')
		return 1;
	if (c == ';' && (peekc(p, 1) == ';' || peekc(p, 1) == '&'))
		return 1;
	if (c != 't' && c != 'e' && c != 'f' && c != 'd' && c != '}')
		return 0;
	for (k = 0; kws[k] != NULL; k++)
		if (at_kw(p, kws[k]))
			return 1;
	return 0;
}

/* Decodes $'...' escapes from s[0..n) into the arena. */
static char *
ansi_c(struct ps *p, const char *s, size_t n, size_t *outlen)
{
	char *o = pl_alloc(p->a, n * 4 + 1);
	size_t i = 0, k = 0;
	unsigned v;
	int d;

	while (i < n) {
		if (s[i] != '\\' || i + 1 >= n) {
			o[k++] = s[i++];
			continue;
		}
		i++;
		switch (s[i]) {
		case 'n': o[k++] = '\n'; i++; break;
		case 't': o[k++] = '\t'; i++; break;
		case 'r': o[k++] = '\r'; i++; break;
		case 'a': o[k++] = '\a'; i++; break;
		case 'b': o[k++] = '\b'; i++; break;
		case 'f': o[k++] = '\f'; i++; break;
		case 'v': o[k++] = '\v'; i++; break;
		case 'e': case 'E': o[k++] = 27; i++; break;
		case '\\': case '\'': case '"': case '?':
			o[k++] = s[i++];
			break;
		case 'c':
			i++;
			if (i < n)
				o[k++] = (char)(s[i++] & 0x1f);
			break;
		case 'x': case 'u': case 'U':
			{
				int max = s[i] == 'x' ? 2 : s[i] == 'u' ? 4 : 8;

				i++;
				v = 0;
				for (d = 0; d < max && i < n; d++, i++) {
					int c = (unsigned char)s[i];

					if (c >= '0' && c <= '9')
						v = v * 16 + (unsigned)(c - '0');
					else if (c >= 'a' && c <= 'f')
						v = v * 16 + (unsigned)(c - 'a' + 10);
					else if (c >= 'A' && c <= 'F')
						v = v * 16 + (unsigned)(c - 'A' + 10);
					else
						break;
				}
				if (d == 0) {
					o[k++] = '\\';
					o[k++] = s[i - 1];
				} else if (v < 0x80 || max == 2) {
					o[k++] = (char)v;
				} else if (v < 0x800) {
					o[k++] = (char)(0xc0 | (v >> 6));
					o[k++] = (char)(0x80 | (v & 0x3f));
				} else if (v < 0x10000) {
					o[k++] = (char)(0xe0 | (v >> 12));
					o[k++] = (char)(0x80 | ((v >> 6) & 0x3f));
					o[k++] = (char)(0x80 | (v & 0x3f));
				} else {
					o[k++] = (char)(0xf0 | ((v >> 18) & 7));
					o[k++] = (char)(0x80 | ((v >> 12) & 0x3f));
					o[k++] = (char)(0x80 | ((v >> 6) & 0x3f));
					o[k++] = (char)(0x80 | (v & 0x3f));
				}
			}
			break;
		default:
			if (s[i] >= '0' && s[i] <= '7') {
				v = 0;
				for (d = 0; d < 3 && i < n && s[i] >= '0' &&
				    s[i] <= '7'; d++, i++)
					v = v * 8 + (unsigned)(s[i] - '0');
				o[k++] = (char)v;
			} else {
				o[k++] = '\\';
				o[k++] = s[i++];
			}
		}
	}
	for (i = 0; i < k; i++)
		if (o[i] == PL_UNK || o[i] == PL_BOPEN || o[i] == PL_BCOMMA ||
		    o[i] == PL_BCLOSE || o[i] == '\0')
			o[i] = '?';
	o[k] = '\0';
	*outlen = k;
	return o;
}

/* Appends a new part to *tail. */
static struct pl_part *
add_part(struct ps *p, struct pl_part **tail, int kind, int quote,
    const char *s, size_t n)
{
	struct pl_part *pt = pl_alloc(p->a, sizeof(*pt));

	pt->kind = (uint8_t)kind;
	pt->quote = (uint8_t)quote;
	pt->s = s;
	pt->len = n;
	(*tail)->next = pt;
	*tail = pt;
	return pt;
}

/*
 * Parses a word inside ${...} up to one of the characters in stop (at
 * nesting level 0), handling quotes and expansions.  Leaves p->i on the
 * stop character.
 */
static struct pl_word *
parse_until(struct ps *p, const char *stop, int quote)
{
	struct pl_word *w = pl_alloc(p->a, sizeof(*w));
	struct pl_part head = { 0 }, *tail = &head;
	size_t start = p->i, lit;
	int c, depth = 0;

	while (!p->failed && step(p)) {
		c = peekc(p, 0);
		if (c == -1)
			return fail(p, "unterminated ${...}");
		if (depth == 0 && strchr(stop, c) != NULL)
			break;
		if (c == '$' || c == '`') {
			parse_dollar(p, &tail, quote);
			continue;
		}
		if (c == '\'' && quote == Q_NONE) {
			size_t e = p->i + 1;

			while (e < p->len && p->s[e] != '\'')
				e++;
			if (e >= p->len)
				return fail(p, "unterminated single quote");
			add_part(p, &tail, PT_LIT, Q_SINGLE, p->s + p->i + 1,
			    e - p->i - 1);
			p->i = e + 1;
			continue;
		}
		if (c == '"' && quote == Q_NONE) {
			p->i++;
			while (!p->failed && peekc(p, 0) != '"' && step(p)) {
				if (peekc(p, 0) == -1)
					return fail(p,
					    "unterminated double quote");
				if (peekc(p, 0) == '$' || peekc(p, 0) == '`') {
					parse_dollar(p, &tail, Q_DOUBLE);
					continue;
				}
				lit = p->i;
				if (peekc(p, 0) == '\\' && p->i + 1 < p->len)
					lit = ++p->i;
				p->i++;
				add_part(p, &tail, PT_LIT, Q_DOUBLE,
				    p->s + lit, p->i - lit);
			}
			p->i++;
			continue;
		}
		lit = p->i;
		if (c == '\\' && p->i + 1 < p->len) {
			lit = ++p->i;
			p->i++;
			add_part(p, &tail, PT_LIT, Q_SINGLE, p->s + lit, 1);
			continue;
		}
		if (c == '{')
			depth++;
		else if (c == '}')
			depth--;
		p->i++;
		add_part(p, &tail, PT_LIT, quote, p->s + lit, 1);
	}
	w->parts = head.next;
	setspan(p, &w->off, &w->len, start);
	return w;
}

/* Parses ${...}; p->i is just after "${". */
static struct pl_part *
parse_brace_param(struct ps *p, struct pl_part **tail, int quote)
{
	struct pl_part *pt = add_part(p, tail, PT_PARAM, quote, NULL, 0);
	size_t ns;
	int c;

	c = peekc(p, 0);
	if (c == '#' && peekc(p, 1) != '}' && peekc(p, 1) != -1) {
		pt->op = PO_LEN;
		p->i++;
	} else if (c == '!' && peekc(p, 1) != '}') {
		pt->op = PO_INDIRECT;
		p->i++;
	}
	ns = p->i;
	c = peekc(p, 0);
	if (is_name_start(c)) {
		while (is_name_char(peekc(p, 0)))
			p->i++;
	} else if (c >= '0' && c <= '9') {
		while (peekc(p, 0) >= '0' && peekc(p, 0) <= '9')
			p->i++;
	} else if (c != -1 && strchr("@*#?$!-", c) != NULL) {
		p->i++;
	} else {
		return fail(p, "bad substitution");
	}
	pt->s = p->s + ns;
	pt->len = p->i - ns;
	if (peekc(p, 0) == '[') {
		/* Array subscript: kept in the name ("a[0]", "a[@]"). */
		while (p->i < p->len && p->s[p->i] != ']')
			p->i++;
		if (p->i >= p->len)
			return fail(p, "unterminated array subscript");
		p->i++;
		pt->len = p->i - ns;
	}
	c = peekc(p, 0);
	if (c == '}') {
		p->i++;
		return pt;
	}
	if (pt->op == PO_LEN || pt->op == PO_INDIRECT) {
		/* ${!prefix*} and friends: unknown. */
		pt->op = PO_OTHER;
		parse_until(p, "}", Q_NONE);
		p->i++;
		return pt;
	}
	if (c == ':') {
		int c1 = peekc(p, 1);

		if (c1 == '-' || c1 == '=' || c1 == '+' || c1 == '?') {
			pt->colon = 1;
			p->i++;
			c = c1;
		} else {
			p->i++;
			pt->op = PO_SUBSTR;
			pt->arg = parse_until(p, ":}", Q_NONE);
			if (peekc(p, 0) == ':') {
				p->i++;
				pt->arg2 = parse_until(p, "}", Q_NONE);
			}
			p->i++;
			return pt;
		}
	}
	switch (c) {
	case '-': pt->op = PO_DEFAULT; p->i++; break;
	case '=': pt->op = PO_ASSIGN; p->i++; break;
	case '+': pt->op = PO_ALT; p->i++; break;
	case '?': pt->op = PO_ERROR; p->i++; break;
	case '#':
		p->i++;
		pt->op = PO_RPRE;
		if (peekc(p, 0) == '#') {
			pt->op = PO_RPRE_L;
			p->i++;
		}
		break;
	case '%':
		p->i++;
		pt->op = PO_RSUF;
		if (peekc(p, 0) == '%') {
			pt->op = PO_RSUF_L;
			p->i++;
		}
		break;
	case '^':
	case ',':
		pt->op = c == '^' ? PO_UPPER : PO_LOWER;
		p->i++;
		if (peekc(p, 0) == c)
			p->i++;
		break;
	case '/':
		p->i++;
		pt->op = PO_REPL;
		if (peekc(p, 0) == '/') {
			pt->op = PO_REPL_ALL;
			p->i++;
		} else if (peekc(p, 0) == '#' || peekc(p, 0) == '%') {
			pt->op = PO_OTHER;
		}
		pt->arg = parse_until(p, "/}", Q_NONE);
		if (peekc(p, 0) == '/') {
			p->i++;
			pt->arg2 = parse_until(p, "}", Q_NONE);
		}
		if (p->failed)
			return NULL;
		p->i++;
		return pt;
	default:
		pt->op = PO_OTHER;
		break;
	}
	pt->arg = parse_until(p, "}", quote == Q_DOUBLE ? Q_DOUBLE : Q_NONE);
	if (p->failed)
		return NULL;
	p->i++;
	return pt;
}

/* Finds the end of $((...)): the index of the first ')' of "))". */
static size_t
arith_end(const struct ps *p, size_t i)
{
	int depth = 0;

	for (; i < p->len; i++) {
		char c = p->s[i];

		if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth == 0)
				return i + 1 < p->len && p->s[i + 1] == ')' ?
				    i : (size_t)-1;
			depth--;
		} else if (c == '\'' || c == '"' || c == '`') {
			return (size_t)-1;
		}
	}
	return (size_t)-1;
}

/* Parses the arithmetic text s[i..end) as a word of expansions. */
static struct pl_word *
parse_arith_text(struct ps *p, size_t end)
{
	struct pl_word *w = pl_alloc(p->a, sizeof(*w));
	struct pl_part head = { 0 }, *tail = &head;
	size_t start = p->i, lit, save = p->len;

	p->len = end;
	while (p->i < end && !p->failed && step(p)) {
		int c = peekc(p, 0);

		if (c == '$' || c == '`') {
			parse_dollar(p, &tail, Q_DOUBLE);
			continue;
		}
		lit = p->i;
		while (p->i < end && p->s[p->i] != '$' && p->s[p->i] != '`')
			p->i++;
		add_part(p, &tail, PT_LIT, Q_DOUBLE, p->s + lit, p->i - lit);
	}
	p->len = save;
	w->parts = head.next;
	setspan(p, &w->off, &w->len, start);
	return w;
}

/* Parses a command substitution body up to ')'; p->i after "(". */
static struct pl_node *
parse_sub(struct ps *p)
{
	struct pl_node *n;
	int save = p->ctxparen;

	if (++p->depth > PL_MAX_DEPTH)
		return fail(p, "nesting too deep");
	p->ctxparen = 1;
	n = parse_list(p);
	p->ctxparen = save;
	p->depth--;
	if (p->failed)
		return NULL;
	skip_space(p);
	if (peekc(p, 0) != ')')
		return fail(p, "unterminated $(...)");
	p->i++;
	return n;
}

/* Parses a backtick substitution; p->i on the opening backtick. */
static struct pl_node *
parse_backtick(struct ps *p)
{
	size_t start = p->i, e = p->i + 1, k = 0;
	char *body;
	struct ps sub;
	struct pl_node *n;

	while (e < p->len && p->s[e] != '`') {
		if (p->s[e] == '\\' && e + 1 < p->len)
			e++;
		e++;
	}
	if (e >= p->len)
		return fail(p, "unterminated backquote");
	body = pl_alloc(p->a, e - start);
	for (size_t i = start + 1; i < e; i++) {
		if (p->s[i] == '\\' && i + 1 < e &&
		    strchr("$`\\", p->s[i + 1]) != NULL)
			i++;
		body[k++] = p->s[i];
	}
	body[k] = '\0';
	p->i = e + 1;
	if (++p->depth > PL_MAX_DEPTH)
		return fail(p, "nesting too deep");
	sub = *p;
	sub.s = body;
	sub.len = k;
	sub.i = 0;
	sub.npending = 0;
	sub.ctxparen = 0;
	if (!p->fix) {
		sub.fix = 1;
		sub.fix_off = start;
		sub.fix_len = e + 1 - start;
	}
	n = parse_list(&sub);
	skip_space(&sub);
	if (!sub.failed && sub.i < sub.len)
		fail(&sub, "unexpected text in backquotes");
	p->depth--;
	if (sub.failed) {
		p->failed = 1;
		p->err->off = start;
		return NULL;
	}
	return n;
}

/*
 * Parses an expansion starting with '$' or '`' at p->i and appends it;
 * a lone '$' becomes a literal.  Returns nonzero on failure.
 */
static int
parse_dollar(struct ps *p, struct pl_part **tail, int quote)
{
	struct pl_part *pt;
	size_t e, n;
	int c;

	if (!step(p))
		return 1;
	if (peekc(p, 0) == '`') {
		pt = add_part(p, tail, PT_CMDSUB, quote, p->s + p->i, 0);
		pt->sub = parse_backtick(p);
		return p->failed;
	}
	c = peekc(p, 1);
	if (c == '\'' && quote == Q_NONE) {
		e = p->i + 2;
		while (e < p->len && p->s[e] != '\'') {
			if (p->s[e] == '\\' && e + 1 < p->len)
				e++;
			e++;
		}
		if (e >= p->len) {
			fail(p, "unterminated $'...'");
			return 1;
		}
		pt = add_part(p, tail, PT_LIT, Q_SINGLE, NULL, 0);
		pt->s = ansi_c(p, p->s + p->i + 2, e - p->i - 2, &n);
		pt->len = n;
		p->i = e + 1;
		return 0;
	}
	if (c == '"' && quote == Q_NONE) {
		/* $"..." is a translated "...": handled as a double quote. */
		p->i++;
		return 0;
	}
	if (c == '(') {
		if (peekc(p, 2) == '(' &&
		    (e = arith_end(p, p->i + 3)) != (size_t)-1) {
			pt = add_part(p, tail, PT_ARITH, quote, NULL, 0);
			p->i += 3;
			pt->arg = parse_arith_text(p, e);
			p->i = e + 2;
			return p->failed;
		}
		pt = add_part(p, tail, PT_CMDSUB, quote, p->s + p->i, 0);
		p->i += 2;
		pt->sub = parse_sub(p);
		return p->failed;
	}
	if (c == '[') {
		/* Old arithmetic $[...]. */
		e = p->i + 2;
		while (e < p->len && p->s[e] != ']')
			e++;
		if (e >= p->len) {
			fail(p, "unterminated $[...]");
			return 1;
		}
		add_part(p, tail, PT_ARITH, quote, NULL, 0);
		p->i = e + 1;
		return 0;
	}
	if (c == '{') {
		p->i += 2;
		parse_brace_param(p, tail, quote);
		return p->failed;
	}
	if (is_name_start(c)) {
		e = p->i + 1;
		while (e < p->len && is_name_char((unsigned char)p->s[e]))
			e++;
		add_part(p, tail, PT_PARAM, quote, p->s + p->i + 1,
		    e - p->i - 1);
		p->i = e;
		return 0;
	}
	if ((c >= '0' && c <= '9') || (c != -1 && strchr("@*#?$!-", c))) {
		add_part(p, tail, PT_PARAM, quote, p->s + p->i + 1, 1);
		p->i += 2;
		return 0;
	}
	add_part(p, tail, PT_LIT, quote, p->s + p->i, 1);
	p->i++;
	return 0;
}

/*
 * Parses one word at p->i.  cond: inside [[ ]] where ( ) | < > may be
 * part of a pattern or regex.  Returns NULL (not failure) when no word
 * starts here.
 */
static struct pl_word *
parse_word(struct ps *p, int cond)
{
	struct pl_word *w;
	struct pl_part head = { 0 }, *tail = &head, *pt;
	size_t start = p->i, lit, e;
	int c, paren = 0;

	w = pl_alloc(p->a, sizeof(*w));
	while (!p->failed) {
		c = peekc(p, 0);
		if ((c == '<' || c == '>') && peekc(p, 1) == '(' &&
		    (p->i == start || cond == 0)) {
			if (p->i != start && head.next != NULL)
				break;
			pt = add_part(p, &tail, c == '<' ? PT_PROCIN :
			    PT_PROCOUT, Q_NONE, NULL, 0);
			p->i += 2;
			pt->sub = parse_sub(p);
			continue;
		}
		if (cond && (c == '(' || c == '|' || c == '<' || c == '>')) {
			if (c == '(')
				paren++;
			p->i++;
			add_part(p, &tail, PT_LIT, Q_NONE, p->s + p->i - 1, 1);
			continue;
		}
		if (cond && c == ')' && paren > 0) {
			paren--;
			p->i++;
			add_part(p, &tail, PT_LIT, Q_NONE, p->s + p->i - 1, 1);
			continue;
		}
		if (is_meta(c) || c == '\r')
			break;
		if (!step(p))
			break;
		switch (c) {
		case '\\':
			if (peekc(p, 1) == '\n') {
				p->i += 2;
				continue;
			}
			if (p->i + 1 >= p->len) {
				add_part(p, &tail, PT_LIT, Q_NONE,
				    p->s + p->i, 1);
				p->i++;
				continue;
			}
			add_part(p, &tail, PT_LIT, Q_SINGLE, p->s + p->i + 1,
			    1);
			p->i += 2;
			continue;
		case '\'':
			e = p->i + 1;
			while (e < p->len && p->s[e] != '\'')
				e++;
			if (e >= p->len)
				return fail(p, "unterminated single quote");
			add_part(p, &tail, PT_LIT, Q_SINGLE, p->s + p->i + 1,
			    e - p->i - 1);
			p->i = e + 1;
			continue;
		case '"':
			p->i++;
			for (;;) {
				if (p->failed || !step(p))
					return NULL;
				c = peekc(p, 0);
				if (c == -1)
					return fail(p,
					    "unterminated double quote");
				if (c == '"')
					break;
				if (c == '$' || c == '`') {
					if (parse_dollar(p, &tail, Q_DOUBLE))
						return NULL;
					continue;
				}
				if (c == '\\' && p->i + 1 < p->len &&
				    strchr("$`\"\\\n", p->s[p->i + 1])) {
					if (p->s[p->i + 1] == '\n') {
						p->i += 2;
						continue;
					}
					add_part(p, &tail, PT_LIT, Q_DOUBLE,
					    p->s + p->i + 1, 1);
					p->i += 2;
					continue;
				}
				lit = p->i++;
				while (p->i < p->len && p->s[p->i] != '"' &&
				    p->s[p->i] != '$' && p->s[p->i] != '`' &&
				    p->s[p->i] != '\\')
					p->i++;
				add_part(p, &tail, PT_LIT, Q_DOUBLE,
				    p->s + lit, p->i - lit);
			}
			if (head.next == NULL || tail->quote != Q_DOUBLE ||
			    tail->kind != PT_LIT)
				add_part(p, &tail, PT_LIT, Q_DOUBLE, p->s, 0);
			p->i++;
			continue;
		case '$':
		case '`':
			if (parse_dollar(p, &tail, Q_NONE))
				return NULL;
			continue;
		default:
			lit = p->i++;
			while (p->i < p->len) {
				c = (unsigned char)p->s[p->i];
				if (is_meta(c) || c == '\\' || c == '\'' ||
				    c == '"' || c == '$' || c == '`' ||
				    c == '\r')
					break;
				p->i++;
			}
			add_part(p, &tail, PT_LIT, Q_NONE, p->s + lit,
			    p->i - lit);
		}
	}
	if (p->failed || head.next == NULL)
		return NULL;
	w->parts = head.next;
	setspan(p, &w->off, &w->len, start);
	return w;
}

/* The delimiter of a here-doc: quote removal, and whether it was quoted. */
static void
heredoc_delim(struct ps *p, struct pl_word *w, const char **d, size_t *dl,
    int *quoted)
{
	struct pl_part *pt;
	size_t n = 0;
	char *s;

	*quoted = 0;
	for (pt = w->parts; pt != NULL; pt = pt->next)
		n += pt->kind == PT_LIT ? pt->len : 1;
	s = pl_alloc(p->a, n + 1);
	n = 0;
	for (pt = w->parts; pt != NULL; pt = pt->next) {
		if (pt->quote != Q_NONE)
			*quoted = 1;
		if (pt->kind == PT_LIT) {
			memcpy(s + n, pt->s, pt->len);
			n += pt->len;
		} else {
			s[n++] = '$';
		}
	}
	*d = s;
	*dl = n;
}

/* Parses a redirection operator at p->i, if any; returns 1 when parsed. */
static int
parse_redir(struct ps *p, struct pl_redir ***rtail)
{
	size_t start = p->i, j = p->i;
	int fd = -1, kind, c, c1, c2;
	struct pl_redir *r;

	while (j < p->len && p->s[j] >= '0' && p->s[j] <= '9')
		j++;
	if (j > p->i) {
		if (j >= p->len || (p->s[j] != '<' && p->s[j] != '>'))
			return 0;
		if (j - p->i > 4)
			return 0;
		fd = 0;
		for (size_t k = p->i; k < j; k++)
			fd = fd * 10 + (p->s[k] - '0');
	} else if (p->s[j] == '{') {
		/* {varname}> : a named fd. */
		size_t k = j + 1;

		while (k < p->len && is_name_char((unsigned char)p->s[k]))
			k++;
		if (k < p->len && k > j + 1 && p->s[k] == '}' &&
		    k + 1 < p->len && (p->s[k + 1] == '<' ||
		    p->s[k + 1] == '>')) {
			j = k + 1;
			fd = 10;
		}
	}
	c = j < p->len ? (unsigned char)p->s[j] : -1;
	c1 = j + 1 < p->len ? (unsigned char)p->s[j + 1] : -1;
	c2 = j + 2 < p->len ? (unsigned char)p->s[j + 2] : -1;
	if (c == '<') {
		if (c1 == '(')
			return 0;
		if (c1 == '<' && c2 == '<') {
			kind = R_HERESTR;
			j += 3;
		} else if (c1 == '<') {
			kind = R_HEREDOC;
			j += 2;
		} else if (c1 == '>') {
			kind = R_RW;
			j += 2;
		} else if (c1 == '&') {
			kind = R_DUPIN;
			j += 2;
		} else {
			kind = R_IN;
			j++;
		}
	} else if (c == '>') {
		if (c1 == '(')
			return 0;
		if (c1 == '>') {
			kind = R_APPEND;
			j += 2;
		} else if (c1 == '&') {
			kind = R_DUPOUT;
			j += 2;
		} else if (c1 == '|') {
			kind = R_OUT;
			j += 2;
		} else {
			kind = R_OUT;
			j++;
		}
	} else if (c == '&' && c1 == '>' && fd < 0) {
		if (c2 == '>') {
			kind = R_ALLAPP;
			j += 3;
		} else {
			kind = R_ALL;
			j += 2;
		}
	} else {
		return 0;
	}
	r = pl_alloc(p->a, sizeof(*r));
	r->kind = kind;
	r->fd = fd;
	p->i = j;
	if (kind == R_HEREDOC && peekc(p, 0) == '-') {
		p->i++;
		r->quoted = 2;		/* strip tabs; fixed below */
	}
	skip_blanks(p);
	r->target = parse_word(p, 0);
	if (p->failed)
		return -1;
	if (r->target == NULL) {
		fail(p, "missing redirection target");
		return -1;
	}
	setspan(p, &r->off, &r->len, start);
	if (kind == R_HEREDOC) {
		int strip = r->quoted == 2, quoted;

		if (p->npending >= MAX_PENDING) {
			fail(p, "too many here-documents");
			return -1;
		}
		heredoc_delim(p, r->target, &p->pdelim[p->npending],
		    &p->pdlen[p->npending], &quoted);
		r->quoted = quoted;
		r->target = NULL;
		p->pstrip[p->npending] = strip;
		p->pending[p->npending++] = r;
	}
	**rtail = r;
	*rtail = &r->next;
	return 1;
}

/* Parses trailing redirections of a compound command. */
static int
parse_redirs(struct ps *p, struct pl_node *n)
{
	struct pl_redir **rt = &n->redirs;
	int r;

	while (*rt != NULL)
		rt = &(*rt)->next;
	for (;;) {
		skip_blanks(p);
		r = parse_redir(p, &rt);
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
	}
}

/* Length of an assignment prefix "NAME=" / "NAME+=" / "NAME[..]=". */
static size_t
assign_prefix(const struct pl_word *w)
{
	const struct pl_part *pt = w->parts;
	size_t i = 0;

	if (pt == NULL || pt->kind != PT_LIT || pt->quote != Q_NONE ||
	    pt->len == 0 || !is_name_start((unsigned char)pt->s[0]))
		return 0;
	while (i < pt->len && is_name_char((unsigned char)pt->s[i]))
		i++;
	if (i < pt->len && pt->s[i] == '[') {
		while (i < pt->len && pt->s[i] != ']')
			i++;
		if (i >= pt->len)
			return 0;
		i++;
	}
	if (i < pt->len && pt->s[i] == '+')
		i++;
	if (i < pt->len && pt->s[i] == '=')
		return i + 1;
	return 0;
}

/* Parses the elements of an array assignment into w->arr, the input at
 * its '('; returns 0, or -1 with the error recorded. */
static int
parse_array(struct ps *p, struct pl_word *w)
{
	struct pl_word **et = &w->arr, *e;

	w->isarr = 1;
	p->i++;
	for (;;) {
		skip_space(p);
		if (peekc(p, 0) == ')') {
			p->i++;
			return 0;
		}
		e = parse_word(p, 0);
		if (e == NULL) {
			if (!p->failed)
				fail(p, "unterminated array");
			return -1;
		}
		*et = e;
		et = &e->next;
	}
}

/* Parses a simple command (or a function definition NAME() body). */
static struct pl_node *
parse_simple(struct ps *p)
{
	struct pl_node *n = pl_alloc(p->a, sizeof(*n));
	struct pl_word **wt = &n->words, **at = &n->assigns, *w;
	struct pl_redir **rt = &n->redirs;
	size_t start = p->i;
	int r, c;

	n->kind = N_SIMPLE;
	for (;;) {
		skip_blanks(p);
		if (p->failed)
			return NULL;
		r = parse_redir(p, &rt);
		if (r < 0)
			return NULL;
		if (r > 0)
			continue;
		c = peekc(p, 0);
		if (c == -1 || c == '\n' || c == ';' || c == '|' ||
		    c == ')' || (c == '&' && peekc(p, 1) != '>'))
			break;
		if (c == '(') {
			/* NAME ( ) : function definition. */
			size_t save = p->i;

			if (n->words != NULL && n->words->next == NULL &&
			    n->assigns == NULL && n->redirs == NULL) {
				p->i++;
				skip_blanks(p);
				if (peekc(p, 0) == ')') {
					struct pl_node *f;

					p->i++;
					f = pl_alloc(p->a, sizeof(*f));
					f->kind = N_FUNC;
					w = n->words;
					f->name = p->s + w->off;
					f->namelen = w->len;
					if (p->fix) {
						struct pl_part *pt = w->parts;

						f->name = pt ? pt->s : "";
						f->namelen = pt ? pt->len : 0;
					}
					skip_space(p);
					if (++p->depth > PL_MAX_DEPTH)
						return fail(p,
						    "nesting too deep");
					f->kids = parse_command(p);
					p->depth--;
					if (f->kids == NULL)
						return p->failed ? NULL :
						    fail(p, "missing function "
						    "body");
					setspan(p, &f->off, &f->len, start);
					return f;
				}
				p->i = save;
			}
			return fail(p, "unexpected '('");
		}
		w = parse_word(p, 0);
		if (w == NULL)
			return p->failed ? NULL : fail(p, "unexpected character");
		if (assign_prefix(w) > 0 && peekc(p, 0) == '(' &&
		    w->parts->next == NULL &&
		    assign_prefix(w) == w->parts->len) {
			if (n->words != NULL) {
				/* declare -a NAME=( ... ) */
				if (parse_array(p, w) != 0)
					return NULL;
				*wt = w;
				wt = &w->next;
				continue;
			}
		}
		if (n->words == NULL && assign_prefix(w) > 0) {
			if (peekc(p, 0) == '(' && w->parts->next == NULL &&
			    assign_prefix(w) == w->parts->len) {
				/* NAME=( elements ) */
				if (parse_array(p, w) != 0)
					return NULL;
			}
			*at = w;
			at = &w->next;
		} else {
			*wt = w;
			wt = &w->next;
		}
	}
	if (n->words == NULL && n->assigns == NULL && n->redirs == NULL)
		return fail(p, c == -1 ? "unexpected end of command" :
		    "syntax error: missing command");
	setspan(p, &n->off, &n->len, start);
	return n;
}

/* Parses [[ ... ]]; p->i after "[[". */
static struct pl_node *
parse_cond(struct ps *p, size_t start)
{
	struct pl_node *n = pl_alloc(p->a, sizeof(*n));
	struct pl_word **wt = &n->words, *w;
	struct pl_part *pt;

	n->kind = N_COND;
	for (;;) {
		skip_space(p);
		if (p->failed)
			return NULL;
		if (peekc(p, 0) == -1)
			return fail(p, "unterminated [[");
		if (at_kw(p, "]]")) {
			p->i += 2;
			break;
		}
		if (peekc(p, 0) == ')' || peekc(p, 0) == ';' ||
		    peekc(p, 0) == '&') {
			w = pl_alloc(p->a, sizeof(*w));
			pt = pl_alloc(p->a, sizeof(*pt));
			pt->kind = PT_LIT;
			pt->s = p->s + p->i;
			pt->len = (peekc(p, 0) == '&' && peekc(p, 1) == '&') ?
			    2 : 1;
			if (peekc(p, 0) == ';')
				return fail(p, "unexpected ';' in [[");
			w->parts = pt;
			setspan(p, &w->off, &w->len, p->i);
			p->i += pt->len;
			*wt = w;
			wt = &w->next;
			continue;
		}
		w = parse_word(p, 1);
		if (w == NULL)
			return p->failed ? NULL : fail(p, "bad [[ expression");
		*wt = w;
		wt = &w->next;
	}
	setspan(p, &n->off, &n->len, start);
	return n;
}

/* Parses the words of "for x in ...", up to ';' or newline. */
static struct pl_word *
parse_wordlist(struct ps *p)
{
	struct pl_word *head = NULL, **t = &head, *w;

	for (;;) {
		skip_blanks(p);
		if (peekc(p, 0) == ';' || peekc(p, 0) == '\n' ||
		    peekc(p, 0) == -1)
			break;
		w = parse_word(p, 0);
		if (w == NULL)
			return p->failed ? NULL : fail(p, "bad word list");
		*t = w;
		t = &w->next;
	}
	if (peekc(p, 0) == ';')
		p->i++;
	return head;
}

/* Parses "do list done" or "{ list }" of a loop into n->kids (append). */
static int
parse_do(struct ps *p, struct pl_node *n, struct pl_node **kt)
{
	struct pl_node *b;

	skip_space(p);
	if (at_kw(p, "{")) {
		p->i++;
		b = parse_list(p);
		if (b == NULL || !expect_kw(p, "}", "missing '}'"))
			return -1;
	} else {
		if (!expect_kw(p, "do", "missing 'do'"))
			return -1;
		b = parse_list(p);
		if (b == NULL || !expect_kw(p, "done", "missing 'done'"))
			return -1;
	}
	*kt = b;
	(void)n;
	return 0;
}

/* Parses a compound or simple command with its redirections. */
/* True when the compound command that starts at p->i begins a
 * compound command: a group, a subshell, or a compound keyword. */
static int
at_compound(const struct ps *p)
{
	return at_kw(p, "{") || peekc(p, 0) == '(' || at_kw(p, "while") ||
	    at_kw(p, "until") || at_kw(p, "for") || at_kw(p, "if") ||
	    at_kw(p, "case") || at_kw(p, "select") || at_kw(p, "[[");
}

/* At "coproc": skips "coproc [NAME]" when a compound command follows
 * and returns 1; leaves p and returns 0 for "coproc simple-command"
 * (the coproc wrapper of the analysis handles that form). */
static int
coproc_compound(struct ps *p)
{
	size_t save = p->i, w;

	p->i += 6;
	skip_blanks(p);
	if (at_compound(p))
		return 1;
	w = p->i;
	while (p->i < p->len && ((p->s[p->i] >= 'a' && p->s[p->i] <= 'z') ||
	    (p->s[p->i] >= 'A' && p->s[p->i] <= 'Z') ||
	    (p->s[p->i] >= '0' && p->s[p->i] <= '9') || p->s[p->i] == '_'))
		p->i++;
	if (p->i > w && (p->i == p->len || p->s[p->i] == ' ' ||
	    p->s[p->i] == '\t')) {
		skip_blanks(p);
		if (at_compound(p))
			return 1;
	}
	p->i = save;
	return 0;
}

static struct pl_node *
parse_command(struct ps *p)
{
	struct pl_node *n = NULL, *c, **kt;
	size_t start;

	skip_blanks(p);
	start = p->i;
	if (++p->depth > PL_MAX_DEPTH)
		return fail(p, "nesting too deep");
	if (!step(p))
		return NULL;
	if (at_kw(p, "coproc") && coproc_compound(p)) {
		/* coproc [NAME] COMPOUND: the compound command runs (in
		 * the background, connected by pipes). */
		p->depth--;
		return parse_command(p);
	}
	if (at_kw(p, "{")) {
		p->i++;
		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_GROUP;
		n->kids = parse_list(p);
		if (n->kids == NULL || !expect_kw(p, "}", "missing '}'"))
			return NULL;
	} else if (peekc(p, 0) == '(' && peekc(p, 1) == '(' &&
	    arith_end(p, p->i + 2) != (size_t)-1) {
		size_t e = arith_end(p, p->i + 2);

		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_ARITH;
		p->i += 2;
		n->words = parse_arith_text(p, e);
		p->i = e + 2;
	} else if (peekc(p, 0) == '(') {
		int save = p->ctxparen;

		p->i++;
		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_SUBSHELL;
		p->ctxparen = 1;
		n->kids = parse_list(p);
		p->ctxparen = save;
		if (n->kids == NULL)
			return NULL;
		skip_space(p);
		if (peekc(p, 0) != ')')
			return fail(p, "missing ')'");
		p->i++;
	} else if (at_kw(p, "if")) {
		p->i += 2;
		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_IF;
		kt = &n->kids;
		for (;;) {
			if ((c = parse_list(p)) == NULL)
				return NULL;
			*kt = c;
			kt = &c->next;
			if (!expect_kw(p, "then", "missing 'then'"))
				return NULL;
			if ((c = parse_list(p)) == NULL)
				return NULL;
			*kt = c;
			kt = &c->next;
			skip_space(p);
			if (at_kw(p, "elif")) {
				p->i += 4;
				continue;
			}
			if (at_kw(p, "else")) {
				p->i += 4;
				if ((c = parse_list(p)) == NULL)
					return NULL;
				*kt = c;
				kt = &c->next;
			}
			if (!expect_kw(p, "fi", "missing 'fi'"))
				return NULL;
			break;
		}
	} else if (at_kw(p, "while") || at_kw(p, "until")) {
		n = pl_alloc(p->a, sizeof(*n));
		n->kind = p->s[p->i] == 'w' ? N_WHILE : N_UNTIL;
		p->i += 5;
		if ((n->kids = parse_list(p)) == NULL)
			return NULL;
		if (parse_do(p, n, &n->kids->next) != 0)
			return NULL;
	} else if (at_kw(p, "for") || at_kw(p, "select")) {
		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_FOR;
		p->i += p->s[p->i] == 'f' ? 3 : 6;
		skip_blanks(p);
		if (peekc(p, 0) == '(' && peekc(p, 1) == '(') {
			size_t e = arith_end(p, p->i + 2);

			if (e == (size_t)-1)
				return fail(p, "bad for ((...))");
			n->arith = p->s + p->i + 2;
			n->arithlen = e - p->i - 2;
			n->words = parse_arith_text(p, e);
			p->i = e + 2;
			skip_blanks(p);
			if (peekc(p, 0) == ';')
				p->i++;
		} else {
			size_t ns = p->i;

			while (is_name_char(peekc(p, 0)))
				p->i++;
			if (p->i == ns)
				return fail(p, "missing for variable");
			n->name = p->s + ns;
			n->namelen = p->i - ns;
			skip_space(p);
			if (at_kw(p, "in")) {
				p->i += 2;
				n->forin = 1;
				n->words = parse_wordlist(p);
				if (p->failed)
					return NULL;
			} else if (peekc(p, 0) == ';') {
				p->i++;
			}
		}
		kt = &n->kids;
		if (parse_do(p, n, kt) != 0)
			return NULL;
	} else if (at_kw(p, "case")) {
		struct pl_node *it;

		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_CASE;
		p->i += 4;
		skip_blanks(p);
		n->subject = parse_word(p, 0);
		if (n->subject == NULL)
			return p->failed ? NULL : fail(p, "missing case word");
		if (!expect_kw(p, "in", "missing 'in'"))
			return NULL;
		kt = &n->kids;
		for (;;) {
			struct pl_word **wt, *w;

			skip_space(p);
			if (at_kw(p, "esac")) {
				p->i += 4;
				break;
			}
			if (peekc(p, 0) == -1)
				return fail(p, "missing 'esac'");
			if (!step(p))
				return NULL;
			it = pl_alloc(p->a, sizeof(*it));
			it->kind = N_CASEITEM;
			wt = &it->words;
			if (peekc(p, 0) == '(')
				p->i++;
			for (;;) {
				skip_blanks(p);
				w = parse_word(p, 0);
				if (w == NULL)
					return p->failed ? NULL :
					    fail(p, "bad case pattern");
				*wt = w;
				wt = &w->next;
				skip_blanks(p);
				if (peekc(p, 0) == '|') {
					p->i++;
					continue;
				}
				if (peekc(p, 0) != ')')
					return fail(p, "missing ')' in case");
				p->i++;
				break;
			}
			skip_space(p);
			if (!(peekc(p, 0) == ';' && peekc(p, 1) == ';') &&
			    !at_kw(p, "esac")) {
				if ((it->kids = parse_list(p)) == NULL)
					return NULL;
			}
			skip_space(p);
			if (peekc(p, 0) == ';' && (peekc(p, 1) == ';' ||
			    peekc(p, 1) == '&')) {
				p->i += 2;
				if (peekc(p, 0) == '&')
					p->i++;
			}
			*kt = it;
			kt = &it->next;
		}
	} else if (at_kw(p, "function")) {
		size_t ns;

		p->i += 8;
		skip_blanks(p);
		ns = p->i;
		while (p->i < p->len && !is_meta(peekc(p, 0)))
			p->i++;
		if (p->i == ns)
			return fail(p, "missing function name");
		n = pl_alloc(p->a, sizeof(*n));
		n->kind = N_FUNC;
		n->name = p->s + ns;
		n->namelen = p->i - ns;
		skip_blanks(p);
		if (peekc(p, 0) == '(') {
			p->i++;
			skip_blanks(p);
			if (peekc(p, 0) != ')')
				return fail(p, "missing ')'");
			p->i++;
		}
		skip_space(p);
		if ((n->kids = parse_command(p)) == NULL)
			return p->failed ? NULL : fail(p,
			    "missing function body");
	} else if (at_kw(p, "[[")) {
		p->i += 2;
		n = parse_cond(p, start);
	} else if (at_kw(p, "!") || at_kw(p, "then") || at_kw(p, "else") ||
	    at_kw(p, "elif") || at_kw(p, "fi") || at_kw(p, "do") ||
	    at_kw(p, "done") || at_kw(p, "esac") || at_kw(p, "}") ||
	    at_kw(p, "in")) {
		return fail(p, "unexpected reserved word");
	} else {
		n = parse_simple(p);
		p->depth--;
		return n;
	}
	if (n == NULL || p->failed)
		return NULL;
	if (parse_redirs(p, n) != 0)
		return NULL;
	setspan(p, &n->off, &n->len, start);
	p->depth--;
	return n;
}

/* At "time": skips the reserved word (and -p) when a compound command
 * follows it, which the time wrapper of the analysis could not take;
 * "time make" stays a simple command. */
static int
time_keyword(struct ps *p)
{
	size_t save = p->i;

	p->i += 4;
	skip_blanks(p);
	if (peekc(p, 0) == '-' && peekc(p, 1) == 'p' && (p->i + 2 == p->len ||
	    p->s[p->i + 2] == ' ' || p->s[p->i + 2] == '\t')) {
		p->i += 2;
		skip_blanks(p);
	}
	if (at_compound(p) || at_kw(p, "!"))
		return 1;
	p->i = save;
	return 0;
}

/* Parses [!] [time [-p]] command [| command]... */
static struct pl_node *
parse_pipeline(struct ps *p)
{
	struct pl_node *first, *n, **kt;
	size_t start;
	int bang = 0;

	skip_blanks(p);
	start = p->i;
	for (;;) {
		if (at_kw(p, "!")) {
			bang = !bang;
			p->i++;
		} else if (at_kw(p, "time") && time_keyword(p)) {
			/* "time [-p] pipeline": the reserved word. */
		} else {
			break;
		}
		skip_blanks(p);
	}
	first = parse_command(p);
	if (first == NULL)
		return NULL;
	skip_blanks(p);
	if (!(peekc(p, 0) == '|' && peekc(p, 1) != '|')) {
		first->bang = bang;
		return first;
	}
	n = pl_alloc(p->a, sizeof(*n));
	n->kind = N_PIPE;
	n->bang = bang;
	n->kids = first;
	kt = &first->next;
	while (peekc(p, 0) == '|' && peekc(p, 1) != '|') {
		p->i++;
		if (peekc(p, 0) == '&')
			p->i++;
		skip_space(p);
		if ((*kt = parse_command(p)) == NULL)
			return p->failed ? NULL : fail(p,
			    "missing command after '|'");
		kt = &(*kt)->next;
		skip_blanks(p);
	}
	setspan(p, &n->off, &n->len, start);
	return n;
}

/* Parses a list up to a terminator (end, ')', ';;', a closing keyword). */
static struct pl_node *
parse_list(struct ps *p)
{
	struct pl_node *n, *item, **kt;
	size_t start;
	int c;

	n = pl_alloc(p->a, sizeof(*n));
	n->kind = N_LIST;
	kt = &n->kids;
	skip_space(p);
	start = p->i;
	for (;;) {
		skip_space(p);
		if (p->failed)
			return NULL;
		if (at_list_end(p))
			break;
		item = parse_pipeline(p);
		if (item == NULL)
			return NULL;
		*kt = item;
		kt = &item->next;
		skip_blanks(p);
		c = peekc(p, 0);
		if (c == '&' && peekc(p, 1) == '&') {
			item->op = OP_AND;
			p->i += 2;
			skip_space(p);
			if (at_list_end(p))
				return fail(p, "missing command after '&&'");
		} else if (c == '|' && peekc(p, 1) == '|') {
			item->op = OP_OR;
			p->i += 2;
			skip_space(p);
			if (at_list_end(p))
				return fail(p, "missing command after '||'");
		} else if (c == '&') {
			item->op = OP_BG;
			p->i++;
		} else if (c == ';' && peekc(p, 1) != ';' &&
		    peekc(p, 1) != '&') {
			item->op = OP_SEQ;
			p->i++;
		} else if (c == '\n') {
			item->op = OP_SEQ;
		} else {
			break;
		}
	}
	if (n->kids == NULL && !p->failed) {
		c = peekc(p, 0);
		if (c == -1 && !p->ctxparen && p->depth == 0)
			return n;	/* empty script: nothing to run */
		if (c == ')' && p->ctxparen)
			return n;	/* $( ) is empty */
		return fail(p, "syntax error: missing command");
	}
	setspan(p, &n->off, &n->len, start);
	return n;
}

struct pl_node *
pl_parse(struct pl_arena *a, const char *text, size_t len, int *work,
    struct pl_parse_err *err)
{
	struct ps p = {
		.a = a, .s = text, .len = len, .work = work, .err = err,
	};
	struct pl_node *n;

	err->off = 0;
	err->msg = NULL;
	n = parse_list(&p);
	if (n == NULL || p.failed)
		return NULL;
	skip_space(&p);
	if (p.i < p.len) {
		fail(&p, p.s[p.i] == ')' ? "unexpected ')'" :
		    "unexpected reserved word or operator");
		return NULL;
	}
	if (p.npending > 0)
		read_heredocs(&p);
	return p.failed ? NULL : n;
}

/*
 * sub-shell.c - where each ${{ }} of a string command sits in the shell
 * syntax around it, and how a value is written there so that it stays
 * data: one shell word outside quotes (vg_buf_shquote), backslashes
 * before $ ` " \ inside double quotes, '\'' for a quote inside single
 * quotes, and no newline inside a comment.
 *
 * The scan follows POSIX sh quoting far enough to know those four places
 * for certain: quotes, backslashes, comments, $( ) nesting and
 * here-documents.  After a $'...' string, which shells end differently,
 * every place is unsafe.  Every other place (backquotes, ${ }, $(( )), a here-
 * document's body) is VG_SHCTX_UNSAFE and
 * refused when the manifest is loaded: no single way of writing a value
 * is data in all of them, and guessing wrong there runs the value.  A
 * $( ) in unquoted text that the scan closes too early (a case pattern's
 * ')') leaves it in unquoted text, where the quoting is the same; inside
 * double quotes a 'case' there makes every later place unsafe.  A task
 * index is digits, data everywhere.
 */
#include <string.h>

#include "runner/manifest/manifest-int.h"

/* Nesting of quoting constructs, innermost last. */
enum frame {
	F_TOP,		/* unquoted text of the command */
	F_CMD,		/* $( ... ) */
	F_DQ,		/* " ... " */
	F_BQ,		/* ` ... ` */
	F_PARAM,	/* ${ ... } */
	F_ARITH,	/* $(( ... )) */
};

#define SH_MAX_DEPTH	32	/* deeper nesting: the rest is unsafe */
#define SH_MAX_HEREDOC	8	/* here-documents started on one line */
#define SH_MAX_DELIM	64	/* longest here-document delimiter kept */

struct heredoc {
	char	delim[SH_MAX_DELIM + 1];
	int	strip;		/* <<- : leading tabs removed */
};

struct lexer {
	enum frame	 stack[SH_MAX_DEPTH];
	int		 depth[SH_MAX_DEPTH];	/* open ( of each */
	int		 n;		/* frames; stack[0] is F_TOP */
	int		 overflow;
	const char	*unsure;	/* every later place is unsafe: why */
	int		 sq;		/* inside '...' */
	int		 comment;
	char		 prev;		/* last unquoted character */
	struct heredoc	 pending[SH_MAX_HEREDOC];
	int		 npending;
	int		 body;		/* in a here-document's body */
	int		 cur;		/* its index in pending */
	char		 line[SH_MAX_DELIM + 2];
	size_t		 linelen;
	int		 linedirty;	/* not a delimiter line */
};

/* Enters frame f. */
static void
push(struct lexer *l, enum frame f)
{
	if (l->n == SH_MAX_DEPTH) {
		l->overflow = 1;
		return;
	}
	l->stack[l->n] = f;
	l->depth[l->n++] = 0;
	/* A word starts after "$(": a comment or a 'case' may follow. */
	l->prev = f == F_CMD ? '(' : 'x';
}

/* True when some frame of l is inside double quotes. */
static int
in_dq(const struct lexer *l)
{
	int i;

	for (i = 1; i < l->n; i++)
		if (l->stack[i] == F_DQ)
			return 1;
	return 0;
}


/* Leaves the innermost frame (never F_TOP). */
static void
pop(struct lexer *l)
{
	if (l->n > 1)
		l->n--;
}

/* True when c ends a word in unquoted shell text. */
static int
word_break(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == ';' ||
	    c == '&' || c == '|' || c == '(' || c == ')' || c == '<' ||
	    c == '>';
}

/*
 * Reads the delimiter of a here-document whose "<<" ends at p (end: the
 * text's end) and queues it; returns where the scan goes on.
 */
static const char *
heredoc_word(struct lexer *l, const char *p, const char *end)
{
	struct heredoc h = { .strip = 0 };
	size_t n = 0;
	char q = 0;

	if (p < end && *p == '-') {
		h.strip = 1;
		p++;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end; p++) {
		if (q != 0) {
			if (*p == q)
				q = 0;
			else if (n < SH_MAX_DELIM)
				h.delim[n++] = *p;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			q = *p;
			continue;
		}
		if (*p == '\\' && p + 1 < end) {
			p++;
			if (n < SH_MAX_DELIM)
				h.delim[n++] = *p;
			continue;
		}
		if (word_break(*p))
			break;
		if (n < SH_MAX_DELIM)
			h.delim[n++] = *p;
	}
	h.delim[n] = '\0';
	if (l->npending < SH_MAX_HEREDOC)
		l->pending[l->npending++] = h;
	else
		l->overflow = 1;
	return p;
}

/* One character of a here-document's body. */
static void
body_char(struct lexer *l, char c)
{
	const struct heredoc *h = &l->pending[l->cur];
	const char *s = l->line;

	if (c != '\n') {
		if (l->linelen <= SH_MAX_DELIM)
			l->line[l->linelen++] = c;
		else
			l->linedirty = 1;
		return;
	}
	l->line[l->linelen] = '\0';
	while (h->strip && *s == '\t')
		s++;
	if (!l->linedirty && strcmp(s, h->delim) == 0 &&
	    ++l->cur == l->npending) {
		l->body = 0;
		l->npending = 0;
	}
	l->linelen = 0;
	l->linedirty = 0;
}

/* Scans unquoted text (F_TOP, F_CMD, F_ARITH) at p; returns the next. */
static const char *
plain_char(struct lexer *l, const char *p, const char *end)
{
	enum frame f = l->stack[l->n - 1];
	char c = *p;

	if (l->comment) {
		if (c == '\n')
			l->comment = 0;
		else
			return p + 1;
	}
	if (c == '\\') {
		l->prev = 'x';
		return p + 2 <= end ? p + 2 : end;
	}
	if (c == '\'') {
		l->sq = 1;
	} else if (c == '$' && p + 1 < end && p[1] == '\'') {
		/* bash ends $'...' at an unescaped quote, dash at any: past
		 * one, no place is sure. */
		if (l->unsure == NULL)
			l->unsure = "after a $'...' string";
		l->sq = 1;
		p++;
	} else if (c == '"') {
		push(l, F_DQ);
	} else if (c == '`') {
		push(l, F_BQ);
	} else if (c == '$' && p + 1 < end && p[1] == '{') {
		push(l, F_PARAM);
		p++;
	} else if (c == '$' && p + 2 < end && p[1] == '(' && p[2] == '(') {
		push(l, F_ARITH);
		p += 2;
	} else if (c == '$' && p + 1 < end && p[1] == '(') {
		push(l, F_CMD);
		p++;
	} else if (f == F_CMD && word_break(l->prev) && in_dq(l) &&
	    end - p >= 4 && strncmp(p, "case", 4) == 0 &&
	    (end - p == 4 || word_break(p[4]))) {
		/* Its patterns' ')' would close the $( ) too early, and
		 * what follows is not surely inside double quotes. */
		if (l->unsure == NULL)
			l->unsure = "after a 'case' in '$( )' within double "
			    "quotes";
	} else if (c == '#' && f != F_ARITH && word_break(l->prev)) {
		l->comment = 1;
	} else if (c == '(' && f != F_TOP) {
		l->depth[l->n - 1]++;
	} else if (c == ')' && f != F_TOP) {
		if (f == F_ARITH && l->depth[l->n - 1] == 0 && p + 1 < end &&
		    p[1] == ')')
			p++;
		if (l->depth[l->n - 1]-- == 0)
			pop(l);
	} else if (c == '<' && f != F_ARITH && p + 1 < end && p[1] == '<' &&
	    (p + 2 >= end || p[2] != '<')) {
		l->prev = 'x';
		return heredoc_word(l, p + 2, end);
	} else if (c == '\n' && l->npending > 0) {
		l->body = 1;
		l->cur = 0;
	}
	if (c != '"' && c != '`' && c != '$')
		l->prev = c;
	return p + 1;
}

/* Scans one character of the text at p; returns the next. */
static const char *
lex_char(struct lexer *l, const char *p, const char *end)
{
	char c = *p;

	if (l->body) {
		body_char(l, c);
		return p + 1;
	}
	if (l->sq) {
		if (c == '\'')
			l->sq = 0;
		return p + 1;
	}
	switch (l->stack[l->n - 1]) {
	case F_DQ:
	case F_BQ:
	case F_PARAM:
		if (l->stack[l->n - 1] == F_PARAM && in_dq(l) &&
		    strchr("'\"\\$`", c) != NULL && l->unsure == NULL)
			l->unsure = "after a '${ }' holding quotes within "
			    "double quotes";
		if (l->stack[l->n - 1] == F_PARAM && c == '\'' && !in_dq(l)) {
			l->sq = 1;
			return p + 1;
		}
		if (c == '\\')
			return p + 2 <= end ? p + 2 : end;
		if ((c == '"' && l->stack[l->n - 1] == F_DQ) ||
		    (c == '`' && l->stack[l->n - 1] == F_BQ) ||
		    (c == '}' && l->stack[l->n - 1] == F_PARAM)) {
			pop(l);
		} else if (c == '`') {
			push(l, F_BQ);
		} else if (c == '"' && l->stack[l->n - 1] == F_PARAM) {
			push(l, F_DQ);
		} else if (c == '$' && p + 1 < end && p[1] == '{') {
			push(l, F_PARAM);
			p++;
		} else if (c == '$' && p + 2 < end && p[1] == '(' &&
		    p[2] == '(') {
			push(l, F_ARITH);
			p += 2;
		} else if (c == '$' && p + 1 < end && p[1] == '(') {
			push(l, F_CMD);
			p++;
		}
		return p + 1;
	default:
		return plain_char(l, p, end);
	}
}

/* The context of a ${{ }} met in state l, and why when unsafe. */
static enum vg_shctx
context(const struct lexer *l, const char **why)
{
	int i;

	*why = NULL;
	if (l->unsure != NULL) {
		*why = l->unsure;
		return VG_SHCTX_UNSAFE;
	}
	if (l->overflow) {
		*why = "too deeply nested";
		return VG_SHCTX_UNSAFE;
	}
	if (l->body) {
		*why = "inside a here-document";
		return VG_SHCTX_UNSAFE;
	}
	if (l->comment)
		return VG_SHCTX_COMMENT;
	for (i = 1; i < l->n; i++) {
		switch (l->stack[i]) {
		case F_BQ:
			*why = "inside backquotes";
			return VG_SHCTX_UNSAFE;
		case F_PARAM:
			*why = "inside '${ }'";
			return VG_SHCTX_UNSAFE;
		case F_ARITH:
			*why = "inside '$(( ))'";
			return VG_SHCTX_UNSAFE;
		default:
			break;
		}
	}
	if (l->sq)
		return VG_SHCTX_SQ;
	return l->stack[l->n - 1] == F_DQ ? VG_SHCTX_DQ : VG_SHCTX_PLAIN;
}

void
vg_sub_shell(const char *s, struct vg_sub_seg *segs, size_t n)
{
	struct lexer l;
	const char *p, *end;
	size_t i;

	memset(&l, 0, sizeof(l));
	l.stack[0] = F_TOP;
	l.n = 1;
	l.prev = '\0';
	for (i = 0; i < n; i++) {
		if (segs[i].kind != VG_SUB_TEXT) {
			segs[i].ctx = context(&l, &segs[i].ctx_why);
			/* A task index is digits: data in every place. */
			if (segs[i].kind == VG_SUB_INDEX &&
			    segs[i].ctx == VG_SHCTX_UNSAFE)
				segs[i].ctx = VG_SHCTX_PLAIN;
			l.prev = 'x';
			l.linedirty = 1;
			continue;
		}
		p = s + segs[i].off;
		end = p + segs[i].len;
		while (p < end)
			p = lex_char(&l, p, end);
	}
}

void
vg_sub_shell_value(struct vg_buf *b, enum vg_shctx ctx, const char *v)
{
	switch (ctx) {
	case VG_SHCTX_DQ:
		for (; *v != '\0'; v++) {
			if (*v == '$' || *v == '`' || *v == '"' || *v == '\\')
				vg_buf_addc(b, '\\');
			vg_buf_addc(b, *v);
		}
		break;
	case VG_SHCTX_SQ:
		for (; *v != '\0'; v++) {
			if (*v == '\'')
				vg_buf_adds(b, "'\\''");
			else
				vg_buf_addc(b, *v);
		}
		break;
	case VG_SHCTX_COMMENT:
		for (; *v != '\0'; v++)
			vg_buf_addc(b, *v == '\n' || *v == '\r' ? ' ' : *v);
		break;
	case VG_SHCTX_PLAIN:
	case VG_SHCTX_UNSAFE:	/* refused at load; never reached */
		vg_buf_shquote(b, v);
		break;
	}
}

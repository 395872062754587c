/*
 * nested.c - code inside code.  Three jobs:
 *
 *  - Literal transformations are evaluated where that is cheap: echo and
 *    printf with escapes, base64/base32/xxd decoding of known data, rev,
 *    tr, seq, so "echo cm0gLXJmIC8K | base64 -d | sh" is seen as
 *    "rm -rf /" run by sh.  Their output is tainted "decoded".
 *  - Code handed to an interpreter (sh -c, eval, a pipe into sh, a
 *    script file written earlier) is judged by where it came from
 *    (downloaded, decoded, read from a socket, an unknown variable) and,
 *    when its text is known, analysed: shell code recursively, other
 *    languages with a light scan.
 *  - The light scan of python, perl, ruby, node, php, lua and awk code
 *    looks for shell calls with literal commands (analysed as shell),
 *    deletion and writes of literal protected paths, socket + dup2 or
 *    shell spawns (reverse shells), fetch + exec (remote code), decode +
 *    exec (obfuscation), fork loops, and secret files.  It is a scan of
 *    substrings, not a parser: cheap, and biased toward reporting.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "runner/policy/nested.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/classify.h"
#include "runner/policy/fold.h"
#include "runner/policy/paths.h"

/* ---- decoders ---- */

/* Appends the printf/echo -e interpretation of s; returns escapes seen. */
static int
unescape(struct vg_buf *b, const char *s, size_t n, int echo, int *stop)
{
	size_t i = 0;
	int esc = 0, d, v;

	while (i < n) {
		if (s[i] != '\\' || i + 1 >= n) {
			vg_buf_addc(b, s[i++]);
			continue;
		}
		i++;
		esc++;
		/* Line ends and tabs lay text out; they hide nothing. */
		switch (s[i]) {
		case 'n': vg_buf_addc(b, '\n'); i++; esc--; break;
		case 't': vg_buf_addc(b, '\t'); i++; esc--; break;
		case 'r': vg_buf_addc(b, '\r'); i++; esc--; break;
		case 'a': vg_buf_addc(b, '\a'); i++; break;
		case 'b': vg_buf_addc(b, '\b'); i++; break;
		case 'f': vg_buf_addc(b, '\f'); i++; break;
		case 'v': vg_buf_addc(b, '\v'); i++; break;
		case 'e': case 'E': vg_buf_addc(b, 27); i++; break;
		case '\\': vg_buf_addc(b, '\\'); i++; break;
		case 'c':
			if (echo) {
				*stop = 1;
				return esc;
			}
			vg_buf_adds(b, "\\c");
			i++;
			break;
		case 'x':
			i++;
			v = 0;
			for (d = 0; d < 2 && i < n && vg_hexval(s[i]) >= 0; d++)
				v = v * 16 + vg_hexval(s[i++]);
			if (d == 0)
				vg_buf_adds(b, "\\x");
			else
				vg_buf_addc(b, (char)v);
			break;
		case 'u':
		case 'U': {
			int max = s[i] == 'u' ? 4 : 8;

			i++;
			v = 0;
			for (d = 0; d < max && i < n &&
			    vg_hexval(s[i]) >= 0; d++)
				v = v * 16 + vg_hexval(s[i++]);
			if (v < 0x80)
				vg_buf_addc(b, (char)v);
			else
				vg_buf_addc(b, '?');
			break;
		}
		default:
			if (s[i] >= '0' && s[i] <= '7') {
				int maxd = 3;

				if (s[i] == '0' && echo)
					i++;
				if (s[i - 1] == '0' && !echo && 0)
					maxd = 4;
				v = 0;
				for (d = 0; d < maxd && i < n && s[i] >= '0' &&
				    s[i] <= '7'; d++)
					v = v * 8 + (s[i++] - '0');
				vg_buf_addc(b, (char)v);
			} else {
				vg_buf_addc(b, '\\');
				vg_buf_addc(b, s[i++]);
				esc--;
			}
		}
	}
	return esc;
}

/* Sets out to the text in b (copied to the arena). */
static void
out_buf(struct pl_an *an, struct pl_stream *out, struct vg_buf *b,
    unsigned taint)
{
	pl_stream_text(out, pl_strndup(an->a, b->data, b->len), b->len, taint);
}

static int
d_echo(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out)
{
	struct vg_buf *b;
	int i = 1, nl = 1, e = 0, esc = 0, stop = 0, k;
	unsigned taint = 0;

	for (; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (s[0] != '-' || s[1] == '\0' || strspn(s + 1, "neE") !=
		    strlen(s + 1))
			break;
		if (strchr(s, 'n'))
			nl = 0;
		if (strchr(s, 'e'))
			e = 1;
	}
	(void)e;
	for (k = i; k < c->argc; k++) {
		taint |= c->argv[k].taint;
		if (c->argv[k].flags & F_UNK) {
			pl_stream_unknown(out, taint | T_VAR);
			for (k++; k < c->argc; k++)
				out->taint |= c->argv[k].taint;
			return 1;
		}
	}
	if ((b = pl_buf_get(an)) == NULL)
		return 1;
	for (k = i; k < c->argc && !stop; k++) {
		if (k > i)
			vg_buf_addc(b, ' ');
		esc += unescape(b, c->argv[k].s, c->argv[k].len, 1, &stop);
	}
	if (nl && !stop)
		vg_buf_addc(b, '\n');
	out_buf(an, out, b, taint | (esc > 0 ? T_DECODED : 0));
	pl_buf_put(an);
	return 1;
}

static int
d_printf(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out)
{
	struct vg_buf *b;
	const struct pl_field *fmt;
	const char *varname = NULL;
	size_t varlen = 0, i;
	int a = 2, esc = 0, stop = 0, rounds = 0, used;
	unsigned taint = 0;

	if (c->argc >= 4 && strcmp(c->argv[1].s, "-v") == 0) {
		varname = c->argv[2].s;
		varlen = c->argv[2].len;
		fmt = &c->argv[3];
		a = 4;
	} else if (c->argc >= 2) {
		fmt = &c->argv[1];
		if (strcmp(fmt->s, "--") == 0 && c->argc >= 3) {
			fmt = &c->argv[2];
			a = 3;
		}
	} else {
		return 1;
	}
	{
		int k;

		for (k = a - 1; k < c->argc; k++) {
			taint |= c->argv[k].taint;
			if (c->argv[k].flags & F_UNK) {
				pl_stream_unknown(out, taint | T_VAR);
				if (varname)
					pl_var_set(an, varname, varlen, "\001",
					    1, taint | T_VAR);
				return 1;
			}
		}
	}
	if ((b = pl_buf_get(an)) == NULL)
		return 1;
	do {
		used = 0;
		for (i = 0; i < fmt->len && !stop; i++) {
			char ch = fmt->s[i];

			if (ch == '\\') {
				size_t j = i + 1;

				while (j < fmt->len && j < i + 10 &&
				    fmt->s[j] != '\\' && fmt->s[j] != '%')
					j++;
				esc += unescape(b, fmt->s + i, j - i, 0, &stop);
				i = j - 1;
				continue;
			}
			if (ch != '%' || i + 1 >= fmt->len) {
				vg_buf_addc(b, ch);
				continue;
			}
			i++;
			while (i < fmt->len && strchr("-+ #0123456789.",
			    fmt->s[i]))
				i++;
			if (i >= fmt->len)
				break;
			ch = fmt->s[i];
			if (ch == '%') {
				vg_buf_addc(b, '%');
				continue;
			}
			used = 1;
			if (a >= c->argc) {
				if (ch == 'd' || ch == 'i')
					vg_buf_addc(b, '0');
				continue;
			}
			if (ch == 'b')
				esc += unescape(b, c->argv[a].s, c->argv[a].len,
				    1, &stop);
			else if (ch == 'c')
				vg_buf_add(b, c->argv[a].s,
				    c->argv[a].len ? 1 : 0);
			else if (ch == 'd' || ch == 'i' || ch == 'x' ||
			    ch == 'o' || ch == 'X' || ch == 'u') {
				long v = strtol(c->argv[a].s, NULL, 0);

				if (c->argv[a].s[0] == '\'' ||
				    c->argv[a].s[0] == '"')
					v = (unsigned char)c->argv[a].s[1];
				vg_buf_printf(b, ch == 'x' ? "%lx" : ch == 'X' ?
				    "%lX" : ch == 'o' ? "%lo" : "%ld", v);
				esc++;
			} else {
				vg_buf_add(b, c->argv[a].s, c->argv[a].len);
			}
			a++;
		}
	} while (used && a < c->argc && ++rounds < 64 && !stop);
	if (varname) {
		pl_var_set(an, varname, varlen, b->data, b->len,
		    taint | (esc ? T_DECODED : 0));
		pl_stream_text(out, "", 0, 0);
	} else {
		out_buf(an, out, b, taint | (esc ? T_DECODED : 0));
	}
	pl_buf_put(an);
	return 1;
}

static void
b64dec(struct vg_buf *b, const char *s, size_t n)
{
	unsigned acc = 0;
	int bits = 0, v;
	size_t i;

	for (i = 0; i < n; i++) {
		if ((v = vg_base64_value((unsigned char)s[i])) < 0)
			continue;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			vg_buf_addc(b, (char)((acc >> bits) & 0xff));
		}
	}
}

static void
b32dec(struct vg_buf *b, const char *s, size_t n)
{
	unsigned long acc = 0;
	int bits = 0, v;
	size_t i;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= '2' && c <= '7')
			v = c - '2' + 26;
		else
			continue;
		acc = (acc << 5) | (unsigned long)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			vg_buf_addc(b, (char)((acc >> bits) & 0xff));
		}
	}
}

static void
hexdec(struct vg_buf *b, const char *s, size_t n, int dump)
{
	size_t i = 0;
	int hi = -1;

	while (i < n) {
		if (dump) {
			/* xxd format: "00000000: 726d 202d  rm -" */
			size_t e = i, col;

			while (e < n && s[e] != '\n')
				e++;
			col = i;
			while (col < e && s[col] != ':')
				col++;
			i = col < e ? col + 1 : i;
			for (; i + 1 < e; i++) {
				if (s[i] == ' ' && s[i + 1] == ' ')
					break;
				if (vg_hexval(s[i]) < 0)
					continue;
				if (hi < 0)
					hi = vg_hexval(s[i]);
				else {
					vg_buf_addc(b, (char)(hi * 16 +
					    vg_hexval(s[i])));
					hi = -1;
				}
			}
			i = e + 1;
			continue;
		}
		if (vg_hexval(s[i]) >= 0) {
			if (hi < 0)
				hi = vg_hexval(s[i]);
			else {
				vg_buf_addc(b, (char)(hi * 16 +
				    vg_hexval(s[i])));
				hi = -1;
			}
		}
		i++;
	}
}

/* Expands a tr set ("a-z", "[:upper:]", escapes) into b. */
static void
tr_set(struct vg_buf *b, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (n - i >= 9 && memcmp(s + i, "[:upper:]", 9) == 0) {
			vg_buf_adds(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
			i += 9;
			continue;
		}
		if (n - i >= 9 && memcmp(s + i, "[:lower:]", 9) == 0) {
			vg_buf_adds(b, "abcdefghijklmnopqrstuvwxyz");
			i += 9;
			continue;
		}
		if (n - i >= 9 && memcmp(s + i, "[:digit:]", 9) == 0) {
			vg_buf_adds(b, "0123456789");
			i += 9;
			continue;
		}
		if (s[i] == '\\' && i + 1 < n) {
			char e = s[i + 1];

			vg_buf_addc(b, e == 'n' ? '\n' : e == 't' ? '\t' : e);
			i += 2;
			continue;
		}
		if (i + 2 < n && s[i + 1] == '-' &&
		    (unsigned char)s[i + 2] >= (unsigned char)s[i]) {
			int ch;

			for (ch = (unsigned char)s[i]; ch <=
			    (unsigned char)s[i + 2]; ch++)
				vg_buf_addc(b, (char)ch);
			i += 3;
			continue;
		}
		vg_buf_addc(b, s[i++]);
	}
}

static int
d_tr(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out)
{
	int i = 1, del = 0, sq = 0;
	struct vg_buf *s1, *s2, *o;
	unsigned char map[256];
	int k;

	while (i < c->argc && c->argv[i].s[0] == '-' && c->argv[i].len > 1) {
		if (strchr(c->argv[i].s, 'd'))
			del = 1;
		if (strchr(c->argv[i].s, 's'))
			sq = 1;
		if (strchr(c->argv[i].s, 'c'))
			sq = 2;
		i++;
	}
	if (!c->in->known || i >= c->argc || sq ||
	    (c->argv[i].flags & F_UNK) ||
	    (!del && (i + 1 >= c->argc || (c->argv[i + 1].flags & F_UNK)))) {
		pl_stream_unknown(out, c->in->taint | T_PROG);
		return 1;
	}
	s1 = pl_buf_get(an);
	s2 = pl_buf_get(an);
	o = pl_buf_get(an);
	if (s1 == NULL || s2 == NULL || o == NULL)
		goto done;
	tr_set(s1, c->argv[i].s, c->argv[i].len);
	if (!del)
		tr_set(s2, c->argv[i + 1].s, c->argv[i + 1].len);
	for (k = 0; k < 256; k++)
		map[k] = (unsigned char)k;
	for (k = 0; k < (int)s1->len; k++) {
		unsigned char from = (unsigned char)s1->data[k];

		if (del)
			map[from] = 0;
		else if (s2->len > 0)
			map[from] = (unsigned char)s2->data[(size_t)k < s2->len ?
			    (size_t)k : s2->len - 1];
	}
	for (size_t j = 0; j < c->in->len; j++) {
		unsigned char ch = (unsigned char)c->in->s[j];

		if (del && map[ch] == 0 && ch != 0)
			continue;
		vg_buf_addc(o, (char)map[ch]);
	}
	out_buf(an, out, o, c->in->taint | T_DECODED);
done:
	if (o)
		pl_buf_put(an);
	if (s2)
		pl_buf_put(an);
	if (s1)
		pl_buf_put(an);
	return 1;
}

static int
d_rev(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out)
{
	struct vg_buf *b;
	const char *s, *e, *l;

	if (c->argc > 1 || !c->in->known) {
		pl_stream_unknown(out, c->in->taint | T_PROG | T_DECODED);
		return 1;
	}
	if ((b = pl_buf_get(an)) == NULL)
		return 1;
	s = c->in->s;
	e = s + c->in->len;
	while (s < e) {
		l = memchr(s, '\n', (size_t)(e - s));
		if (l == NULL)
			l = e;
		for (const char *p = l; p > s; p--)
			vg_buf_addc(b, p[-1]);
		if (l < e)
			vg_buf_addc(b, '\n');
		s = l + 1;
	}
	out_buf(an, out, b, c->in->taint | T_DECODED);
	pl_buf_put(an);
	return 1;
}

/* base64/base32/xxd/openssl base64: decode stdin or a literal file. */
static int
d_codec(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out, int kind)
{
	struct vg_buf *b;
	int i, decode = 0, plain = 0, file = 0;
	const struct pl_stream *in = c->in;
	struct pl_stream fs;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (strcmp(s, "-d") == 0 || strcmp(s, "--decode") == 0 ||
		    strcmp(s, "-D") == 0 || strcmp(s, "-r") == 0 ||
		    strcmp(s, "--revert") == 0 ||
		    (s[0] == '-' && s[1] != '-' && strchr(s, 'd') &&
		    kind != 2) || (kind == 2 && s[0] == '-' && strchr(s, 'r')))
			decode = 1;
		if (kind == 2 && s[0] == '-' && strchr(s, 'p'))
			plain = 1;
		if (kind == 3 && (strcmp(s, "-a") == 0 || strcmp(s, "-A") == 0
		    || strcmp(s, "-base64") == 0 || strcmp(s, "base64") == 0))
			plain = 1;
		if (s[0] != '-' && !(kind == 3 && (strcmp(s, "enc") == 0 ||
		    strcmp(s, "base64") == 0)) && file == 0 &&
		    !(i > 1 && (strcmp(c->argv[i - 1].s, "-w") == 0 ||
		    strcmp(c->argv[i - 1].s, "-in") == 0 ||
		    strcmp(c->argv[i - 1].s, "-c") == 0 ||
		    strcmp(c->argv[i - 1].s, "-l") == 0)))
			file = i;
		if (kind == 3 && strcmp(s, "-in") == 0 && i + 1 < c->argc)
			file = i + 1;
	}
	if (kind == 3 && !plain)
		return 0;
	if (file > 0) {
		struct pl_path p;
		struct pl_file *tf;

		pl_path_classify(an, &c->argv[file], &p);
		if (!decode && (p.attr & PA_SECRET)) {
			pl_find(an, VG_CAT_EXFILTRATION, "builtin:secret-read",
			    c->off, c->len, "'%s' reads credentials or a "
			    "private key ('%s')", c->name, p.abs);
			pl_stream_unknown(out, T_SECRET | T_PROG);
			return 1;
		}
		tf = pl_file_find(an, p.abs);
		if (tf == NULL || tf->content == NULL) {
			pl_stream_unknown(out, T_PROG | (decode ? T_DECODED :
			    0) | (tf ? tf->taint : 0));
			return 1;
		}
		pl_stream_text(&fs, tf->content, tf->clen, tf->taint);
		in = &fs;
	}
	if (!decode) {
		pl_stream_unknown(out, T_PROG | (in->taint & ~(unsigned)T_DECODED));
		return 1;
	}
	if (!in->known) {
		pl_stream_unknown(out, in->taint | T_DECODED | T_PROG);
		return 1;
	}
	if ((b = pl_buf_get(an)) == NULL)
		return 1;
	if (kind == 0 || kind == 3)
		b64dec(b, in->s, in->len);
	else if (kind == 1)
		b32dec(b, in->s, in->len);
	else
		hexdec(b, in->s, in->len, !plain);
	for (size_t k = 0; k < b->len; k++)
		if (b->data[k] == PL_UNK || b->data[k] == '\0')
			b->data[k] = '?';
	out_buf(an, out, b, in->taint | T_DECODED);
	pl_buf_put(an);
	return 1;
}

static int
d_seq(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out)
{
	long v[3] = { 1, 1, 0 }, cnt, x;
	int n = 0, i;
	struct vg_buf *b;

	for (i = 1; i < c->argc && n < 3; i++) {
		char *e;

		if (c->argv[i].s[0] == '-' && (c->argv[i].s[1] < '0' ||
		    c->argv[i].s[1] > '9')) {
			if (strcmp(c->argv[i].s, "-s") == 0 ||
			    strcmp(c->argv[i].s, "-f") == 0)
				i++;
			continue;
		}
		if (c->argv[i].flags & F_UNK)
			return 0;
		v[n++] = strtol(c->argv[i].s, &e, 10);
	}
	if (n == 1) {
		v[2] = v[0];
		v[0] = 1;
		v[1] = 1;
	} else if (n == 2) {
		v[2] = v[1];
		v[1] = 1;
	}
	if (v[1] == 0)
		return 0;
	cnt = (v[2] - v[0]) / v[1] + 1;
	if (cnt < 0)
		cnt = 0;
	if (cnt > PL_MAX_BRACE) {
		if (cnt > an->loopiter)
			an->loopiter = cnt;
		pl_stream_unknown(out, 0);
		return 1;
	}
	if ((b = pl_buf_get(an)) == NULL)
		return 1;
	for (x = v[0], i = 0; i < cnt; i++, x += v[1])
		vg_buf_printf(b, "%ld\n", x);
	out_buf(an, out, b, 0);
	pl_buf_put(an);
	return 1;
}

int
pl_decode(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out)
{
	const char *n = c->name;

	switch (n[0]) {
	case 'e':
		if (strcmp(n, "echo") == 0)
			return d_echo(an, c, out);
		break;
	case 'p':
		if (strcmp(n, "printf") == 0)
			return d_printf(an, c, out);
		break;
	case 'b':
		if (strcmp(n, "base64") == 0)
			return d_codec(an, c, out, 0);
		if (strcmp(n, "base32") == 0)
			return d_codec(an, c, out, 1);
		if (strcmp(n, "basenc") == 0)
			return d_codec(an, c, out, 0);
		break;
	case 'x':
		if (strcmp(n, "xxd") == 0)
			return d_codec(an, c, out, 2);
		break;
	case 'o':
		if (strcmp(n, "openssl") == 0)
			return d_codec(an, c, out, 3);
		break;
	case 'r':
		if (strcmp(n, "rev") == 0)
			return d_rev(an, c, out);
		break;
	case 't':
		if (strcmp(n, "tr") == 0)
			return d_tr(an, c, out);
		break;
	case 's':
		if (strcmp(n, "seq") == 0)
			return d_seq(an, c, out);
		break;
	case 'u':
		if (strcmp(n, "uudecode") == 0) {
			pl_stream_unknown(out, c->in->taint | T_DECODED);
			return 1;
		}
		break;
	}
	return 0;
}

/* ---- interpreters ---- */

static void pl_scan_script(struct pl_an *an, const char *lang,
    const char *code, size_t len, size_t off, size_t slen,
    struct pl_stream *in);

void
pl_code_to_interp(struct pl_an *an, struct pl_cmd *c, const char *lang,
    struct pl_stream *code, size_t off, size_t slen)
{
	struct pl_stream in, out;

	if (code->taint & T_SOCK) {
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:socket-code", c->off,
		    c->len, "'%s' runs commands read from a network "
		    "connection", c->name);
		return;
	}
	if (code->taint & T_NET) {
		an->find_url = code->url;
		pl_find(an, VG_CAT_REMOTE_CODE, "builtin:net-code", c->off,
		    c->len, "'%s' runs code downloaded from the network",
		    c->name);
		an->find_url = NULL;
		return;
	}
	if (code->taint & T_DECODED)
		pl_find(an, VG_CAT_OBFUSCATION, "builtin:decoded-code", c->off,
		    c->len, "'%s' runs code produced by decoding data",
		    c->name);
	if (!code->known) {
		if (code->taint & T_DECODED)
			pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
			    "builtin:opaque-decoded", c->off, c->len, "'%s' runs "
			    "code decoded from text only known at run time",
			    c->name);
		else if (code->taint & T_OPAQUE)
			pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
			    "builtin:opaque-file", c->off, c->len, "'%s' runs "
			    "a file copied in from elsewhere, whose content "
			    "the command does not show", c->name);
		else if ((code->taint & (T_VAR | T_SECRET)) &&
		    !(code->taint & (T_DECODED | T_SETUP)))
			pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
			    "builtin:dynamic-code", c->off, c->len, "'%s' runs "
			    "code whose text is only known at run time",
			    c->name);
		return;
	}
	pl_stream_unknown(&in, 0);
	if (strcmp(lang, "sh") == 0)
		pl_analyse_text(an, code->s, code->len, off, slen, &in, &out);
	else
		pl_scan_script(an, lang, code->s, code->len, off, slen,
		    c->in);
}

/* ---- light scan of other languages ---- */

struct scan {
	struct pl_an	*an;
	const char	*lang;
	const char	*s;
	size_t		 n;
	size_t		 off;
	size_t		 slen;
};

static const char *
sfind(const struct scan *sc, const char *from, const char *pat)
{
	size_t pl = strlen(pat);

	if (from == NULL)
		from = sc->s;
	if ((size_t)(from - sc->s) >= sc->n)
		return NULL;
	return memmem(from, sc->n - (size_t)(from - sc->s), pat, pl);
}

static int
has(const struct scan *sc, const char *pat)
{
	return sfind(sc, NULL, pat) != NULL;
}

static int
has_any(const struct scan *sc, const char *const *pats)
{
	for (; *pats != NULL; pats++)
		if (has(sc, *pats))
			return 1;
	return 0;
}

/*
 * Reads the string literal that starts after p (within a short window,
 * skipping spaces, brackets and nested call names).  Returns its text in
 * the arena, or NULL.
 */
static char *
literal_after(struct scan *sc, const char *p, size_t *len, const char **end)
{
	const char *e = sc->s + sc->n, *q;
	struct vg_buf *b;
	char quote;
	char *r;

	for (q = p; q < e && q < p + 80; q++) {
		if (*q == ';' || *q == '\n' || *q == ')')
			return NULL;
		if (*q == '\'' || *q == '"' || *q == '`')
			break;
	}
	if (q >= e || q >= p + 80)
		return NULL;
	quote = *q++;
	if ((b = pl_buf_get(sc->an)) == NULL)
		return NULL;
	while (q < e && *q != quote) {
		if (*q == '\\' && q + 1 < e) {
			q++;
			if (*q == quote || *q == '\\')
				vg_buf_addc(b, *q);
			else if (*q == 'n')
				vg_buf_addc(b, '\n');
			else {
				vg_buf_addc(b, '\\');
				vg_buf_addc(b, *q);
			}
			q++;
			continue;
		}
		vg_buf_addc(b, *q++);
	}
	if (end != NULL)
		*end = q < e ? q + 1 : e;
	r = pl_strndup(sc->an->a, b->data, b->len);
	*len = b->len;
	pl_buf_put(sc->an);
	return r;
}

/* A literal path beginning with the home directory as code writes it
 * ("~/x", Perl's "$ENV{HOME}/x", "$HOME/x"), made absolute. */
static char *
home_path(struct scan *sc, char *lit, size_t *l)
{
	static const char *const homes[] = { "~", "$ENV{HOME}", "$HOME",
	    "${HOME}", NULL };
	const char *h = sc->an->home;
	size_t hl, pl = 0;
	char *t;
	int k;

	if (h == NULL)
		return lit;
	for (k = 0; homes[k] != NULL; k++) {
		pl = strlen(homes[k]);
		if (*l >= pl && strncmp(lit, homes[k], pl) == 0 &&
		    (lit[pl] == '/' || lit[pl] == '\0'))
			break;
	}
	if (homes[k] == NULL)
		return lit;
	hl = strlen(h);
	t = pl_alloc(sc->an->a, hl + *l - pl + 1);
	memcpy(t, h, hl);
	memcpy(t + hl, lit + pl, *l - pl);
	*l = hl + *l - pl;
	return t;
}

/* Paths given literally to deletion or write calls. */
static void
scan_path_calls(struct scan *sc, const char *const *apis, int write)
{
	const char *const *api;

	for (api = apis; *api != NULL; api++) {
		const char *p = NULL;
		int guard = 0;

		while ((p = sfind(sc, p, *api)) != NULL && guard++ < 8) {
			struct pl_field f;
			struct pl_path pp;
			const char *end;
			size_t l;
			char *lit;

			p += strlen(*api);
			lit = literal_after(sc, p, &l, &end);
			if (lit == NULL)
				continue;
			if (write == 2) {
				/* perl open(F, ">/path"), and the three
				 * arguments of open(F, ">>", PATH): the path
				 * is the next literal, glob("~/x") too. */
				if (lit[0] != '>' && lit[0] != '+')
					continue;
				while (*lit == '>' || *lit == '+' ||
				    *lit == ' ')
					lit++, l--;
				if (l == 0 && (lit = literal_after(sc, end,
				    &l, &end)) == NULL)
					continue;
			}
			if (write == 1 && strcmp(*api, "open(") == 0) {
				size_t ml;
				char *mode;

				/* The mode after a nested call's closing
				 * parenthesis: open(expanduser("~/x"), "a"). */
				while (end < sc->s + sc->n && (*end == ')' ||
				    *end == ' '))
					end++;
				mode = literal_after(sc, end, &ml, NULL);
				if (mode == NULL || strpbrk(mode, "wax+") ==
				    NULL)
					continue;
			}
			memset(&f, 0, sizeof(f));
			lit = home_path(sc, lit, &l);
			f.s = lit;
			f.len = l;
			f.off = sc->off;
			f.slen = sc->slen;
			if (write) {
				pl_classify_write(sc->an, &f, 0, sc->lang);
				continue;
			}
			pl_path_classify(sc->an, &f, &pp);
			if (pl_path_top(sc->an, &pp))
				pl_find_floor(sc->an, PL_FLOOR_DELETE,
				    VG_CAT_DESTRUCTIVE,
				    "builtin:script-delete", sc->off, sc->slen,
				    "%s code deletes the protected path '%s'",
				    sc->lang, pp.abs);
			else if (pp.cls == PC_PROTECTED || pp.cls == PC_DEVICE)
				pl_find(sc->an, VG_CAT_DESTRUCTIVE,
				    "builtin:script-delete", sc->off, sc->slen,
				    "%s code deletes the protected path '%s'",
				    sc->lang, pp.abs);
		}
	}
}

/* True when fork is called inside a loop ("fork while fork", "while
 * True: os.fork()", "loop { fork }"), not once to daemonise. */
static int
fork_loop(const struct scan *sc)
{
	static const char *const loops[] = { "while", "loop", "for(;;)",
	    "for (;;)", "until", "iter(", NULL };
	const char *const *l;
	const char *p = NULL;
	int guard = 0;

	while ((p = sfind(sc, p, "fork")) != NULL && guard++ < 16) {
		const char *after = p + 4, *e = sc->s + sc->n;

		while (after < e && (*after == ' ' || *after == '(' ||
		    *after == ')' || *after == ';'))
			after++;
		if ((size_t)(e - after) >= 5 && (strncmp(after, "while", 5) ==
		    0 || strncmp(after, "until", 5) == 0))
			return 1;
		for (l = loops; *l != NULL; l++) {
			const char *q = p - (p - sc->s > 40 ? 40 : p - sc->s);

			if (memmem(q, (size_t)(p - q), *l, strlen(*l)) != NULL &&
			    memmem(q, (size_t)(p - q), "exit", 4) == NULL)
				return 1;
		}
		p += 4;
	}
	return 0;
}

/* Code a script hands its own eval or exec, scanned as that language. */
static void
scan_again(struct pl_an *an, const char *lang, const char *code, size_t len,
    size_t off, size_t slen)
{
	pl_scan_script(an, lang, code, len, off, slen, NULL);
}

static void
pl_scan_script(struct pl_an *an, const char *lang, const char *code,
    size_t len, size_t off, size_t slen, struct pl_stream *in)
{
	static const char *const shell_py[] = { "os.system", "os.popen",
	    "subprocess.run", "subprocess.call", "subprocess.check_call",
	    "subprocess.check_output", "subprocess.Popen",
	    "subprocess.getoutput", "subprocess.getstatusoutput",
	    "commands.getoutput", "pty.spawn", "os.execl", "os.execv",
	    "os.execvp", "os.execlp", "os.spawnl", ".system(", NULL };
	static const char *const shell_other[] = { "system(", "system ",
	    "exec(", "exec ", "qx(", "qx{", "qx/", "%x(", "%x{", "popen(",
	    "shell_exec(", "passthru(", "proc_open(", "execSync(",
	    "spawnSync(", "spawn(", "execFile(", "execFileSync(",
	    "os.execute(", "io.popen(", "Open3.capture2(", "Open3.popen3(",
	    "capture2e(", "`", "system2(", NULL };
	static const char *const del_apis[] = { "rmtree(", "os.remove(",
	    "os.unlink(", "os.rmdir(", "os.removedirs(", "unlink(",
	    "remove_tree(", "rm_rf(", "rm_r(", "rm_f(", "FileUtils.rm(",
	    "File.delete(", "rmSync(", "rmdirSync(", "unlinkSync(",
	    "fs.rm(", "rimraf(", "rmdir(", "os.remove(", "unlink ", NULL };
	static const char *const write_apis[] = { "open(", "File.write(",
	    "writeFileSync(", "appendFileSync(", "writeFile(",
	    "file_put_contents(", "write_text(", NULL };
	static const char *const perl_open[] = { "open(", "open ", NULL };
	static const char *const net[] = { "urlopen", "urllib", "requests.",
	    "http.client", "httpx", "LWP", "HTTP::Tiny", "Net::HTTP",
	    "open-uri", "URI.open", "fetch(", "http.get", "https.get",
	    "curl_exec", "file_get_contents(\"http", "file_get_contents('http",
	    "wget", "curl", "http://", "https://", "ftp://", NULL };
	static const char *const sock[] = { "socket", "TCPSocket",
	    "fsockopen", "net.connect", "net.Socket", "createConnection",
	    "/inet/tcp", "/inet/udp", "IO::Socket", "socket.tcp", NULL };
	static const char *const shellish[] = { "dup2", "/bin/sh", "/bin/bash",
	    "sh -i", "\"sh\"", "'sh'", "\"bash\"", "'bash'", "cmd.exe",
	    "pty.spawn", "|&", "/bin/zsh", "\"-i\"", "'-i'", "fdopen",
	    "system", "popen", "exec", "spawn", "shell_exec", "passthru",
	    "proc_open", "child_process", NULL };
	static const char *const decode[] = { "b64decode", "base64",
	    "decodebytes", "codecs.decode", "fromhex", "unhexlify",
	    "zlib.decompress", "marshal.loads", "rot13", "rot_13",
	    "decode_base64", "MIME::Base64", "unpack(", "atob(",
	    "fromCharCode", "gzinflate", "str_rot13", "hex2bin", "strrev(",
	    "[::-1]", ".reverse", "Base64", "pack(", "'base64'",
	    "\"base64\"", "chr(", "String.fromCharCode", NULL };
	static const char *const codeexec_py[] = { "exec(", "eval(",
	    "compile(", "__import__(", NULL };
	static const char *const codeexec_other[] = { "eval", "new Function",
	    "vm.run", "instance_eval", "assert(", "create_function", NULL };
	static const char *const envs[] = { "os.environ", "%ENV", "ENV[",
	    "ENV.to", "process.env", "getenv", "$_ENV", "environ", NULL };
	static const char *const sends[] = { "requests.post", "urlopen",
	    ".send(", "sendall", "http.client", "LWP", "Net::HTTP", "fetch(",
	    "request(", "post(", "curl", "socket", NULL };
	static const char *const secrets[] = { ".ssh/id_", "/etc/shadow",
	    ".aws/credentials", ".netrc", ".git-credentials", ".kube/config",
	    "/etc/gshadow", ".docker/config.json", ".gnupg", ".pgpass",
	    ".config/gcloud", NULL };
	struct scan sc = { an, lang, code, len, off, slen };
	int py = strcmp(lang, "python") == 0, awk = strcmp(lang, "awk") == 0;
	int is_net, is_sock, is_exec, is_dec;

	(void)in;
	if (!pl_step(an, (int)(len / 64) + 1))
		return;
	is_net = has_any(&sc, net);
	is_sock = has_any(&sc, sock);
	is_dec = has_any(&sc, decode);
	is_exec = has_any(&sc, py ? codeexec_py : codeexec_other);
	if (is_sock && (has_any(&sc, shellish) || (awk && has(&sc, "getline"))))
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:script-revshell", off,
		    slen, "%s code connects a shell to a network socket", lang);
	if (is_net && is_exec)
		pl_find(an, VG_CAT_REMOTE_CODE, "builtin:script-fetch-exec", off,
		    slen, "%s code runs code fetched from the network", lang);
	if (is_dec && (is_exec || has_any(&sc, py ? shell_py : shell_other)))
		pl_find(an, VG_CAT_OBFUSCATION, "builtin:script-decode-exec",
		    off, slen, "%s code runs decoded data", lang);
	if (fork_loop(&sc))
		pl_find_floor(an, PL_FLOOR_FORKBOMB, VG_CAT_DISRUPTION,
		    "builtin:script-forkbomb", off,
		    slen, "%s code forks in a loop", lang);
	if (has_any(&sc, secrets))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:script-secret", off,
		    slen, "%s code reads credentials or a private key", lang);
	if (has_any(&sc, envs) && has_any(&sc, sends) && (is_net || is_sock))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:script-env-send", off,
		    slen, "%s code sends the environment over the network",
		    lang);
	if (has(&sc, "setuid(0") || has(&sc, "setreuid(0"))
		pl_find(an, VG_CAT_PRIVILEGE, "builtin:script-setuid", off, slen,
		    "%s code switches to user id 0", lang);
	if (has(&sc, "0o4755") || has(&sc, "04755") || has(&sc, "0o6755") ||
	    has(&sc, "S_ISUID"))
		pl_find(an, VG_CAT_PERMISSIONS, "builtin:script-setuid-bit", off,
		    slen, "%s code sets a setuid bit", lang);
	if (has(&sc, "kill(-1") || has(&sc, "kill(-1,") ||
	    has(&sc, "kill -9, -1") || has(&sc, "KILL, -1") ||
	    has(&sc, "kill(9, -1") || has(&sc, "killpg(1"))
		pl_find_floor(an, PL_FLOOR_KILLALL, VG_CAT_DISRUPTION,
		    "builtin:script-killall", off,
		    slen, "%s code signals every process", lang);
	pl_fold_runners(an, lang, code, len, off, slen, scan_again);
	if (awk) {
		/* "cmd" | getline and print | "cmd" */
		const char *p = NULL;
		int guard = 0;
		struct pl_stream i2, o2;

		pl_stream_unknown(&i2, 0);
		while ((p = sfind(&sc, p, "| getline")) != NULL && guard++ < 4) {
			const char *q = p;

			while (q > code && *q != '"')
				q--;
			if (q > code) {
				const char *st = q - 1;

				while (st > code && *st != '"')
					st--;
				if (*st == '"')
					pl_analyse_text(an, st + 1,
					    (size_t)(q - st - 1), off, slen,
					    &i2, &o2);
			}
			p++;
		}
		p = NULL;
		guard = 0;
		while ((p = sfind(&sc, p, "| \"")) != NULL && guard++ < 4) {
			size_t l;
			char *lit = literal_after(&sc, p + 1, &l, NULL);

			/* print ... | "sh": what is printed is run as code */
			if (lit != NULL && (strcmp(lit, "sh") == 0 ||
			    strcmp(lit, "bash") == 0 || strcmp(lit, "/bin/sh") ==
			    0 || strcmp(lit, "/bin/bash") == 0))
				pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
				    "builtin:opaque-script-command", off, slen,
				    "awk code prints the commands a shell runs");
			else if (lit != NULL)
				pl_analyse_text(an, lit, l, off, slen, &i2, &o2);
			p++;
		}
	}
	scan_path_calls(&sc, del_apis, 0);
	scan_path_calls(&sc, strcmp(lang, "perl") == 0 ? perl_open :
	    write_apis, strcmp(lang, "perl") == 0 ? 2 : 1);
}

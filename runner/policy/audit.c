/*
 * audit.c - the record of every decision: secret redaction of the
 * command text, one JSON line per decision appended to the audit file
 * (O_APPEND, one write(2) per line so concurrent writers do not
 * interleave).  policy.c builds the record and hands it to the sink
 * (the command layer passes one that stores it with vg_store_audit).
 *
 * Redaction errs on the side of hiding: values assigned to variables or
 * options named like TOKEN, SECRET, PASSWORD, PASSWD, KEY or
 * CREDENTIAL, passwords in URLs (scheme:[//]user:PASS@host),
 * Authorization headers and headers named like key or token, and strings shaped like
 * well-known tokens (GitHub, AWS, Slack, GitLab, OpenAI-style sk-,
 * Hugging Face, Google API keys, JWTs, PEM private keys).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/adopt.h"
#include "common/beneath.h"
#include "common/secrets.h"
#include "runner/policy/audit.h"

static int
is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* End of a shell value starting at i: quoted or up to a separator. */
static size_t
value_end(const char *s, size_t n, size_t i)
{
	if (i < n && (s[i] == '\'' || s[i] == '"')) {
		char q = s[i];
		size_t j = i + 1;

		while (j < n && s[j] != q) {
			if (s[j] == '\\' && q == '"' && j + 1 < n)
				j++;
			j++;
		}
		return j < n ? j + 1 : n;
	}
	while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' &&
	    s[i] != ';' && s[i] != '&' && s[i] != '|' && s[i] != ')' &&
	    s[i] != '\'' && s[i] != '"')
		i++;
	return i;
}

/* Appends "***" keeping the quotes of a quoted value. */
static void
mask(struct vg_buf *out, const char *s, size_t a, size_t b)
{
	if (b > a && (s[a] == '\'' || s[a] == '"')) {
		vg_buf_addc(out, s[a]);
		vg_buf_adds(out, "***");
		if (b - a >= 2 && s[b - 1] == s[a])
			vg_buf_addc(out, s[a]);
		return;
	}
	vg_buf_adds(out, "***");
}

/* True when a token prefix of token_len starts with the letters a b. */
static int
token_start(char a, char b)
{
	static const char pairs[] = "ghglxoxaskrkhfnppyAKASAIeydoSG";
	size_t k;

	for (k = 0; k + 1 < sizeof(pairs); k += 2)
		if (pairs[k] == a && pairs[k + 1] == b)
			return 1;
	return 0;
}

/* Length of a well-known token starting at s, or 0. */
static size_t
token_len(const char *s, size_t n)
{
	static const struct {
		const char	*prefix;
		size_t		 min;	/* characters after the prefix */
	} pre[] = {
		{ "ghp_", 20 }, { "gho_", 20 }, { "ghu_", 20 }, { "ghs_", 20 },
		{ "ghr_", 20 }, { "github_pat_", 20 }, { "glpat-", 16 },
		{ "xoxb-", 10 }, { "xoxp-", 10 }, { "xoxa-", 10 },
		{ "xoxs-", 10 }, { "xoxr-", 10 }, { "xapp-", 10 },
		{ "sk-", 20 }, { "sk_live_", 16 }, { "rk_live_", 16 },
		{ "sk_test_", 16 }, { "hf_", 30 }, { "npm_", 30 },
		{ "pypi-", 30 }, { "AKIA", 16 }, { "ASIA", 16 },
		{ "AIza", 30 }, { "eyJ", 20 }, { "dop_v1_", 30 },
		{ "SG.", 30 },
	};
	size_t k, j;

	/* Most words start with none of the prefixes' first two
	 * letters. */
	if (n < 3 || !token_start(s[0], s[1]))
		return 0;
	for (k = 0; k < sizeof(pre) / sizeof(pre[0]); k++) {
		size_t pl = strlen(pre[k].prefix);

		if (n < pl || memcmp(s, pre[k].prefix, pl) != 0)
			continue;
		for (j = pl; j < n && (is_word((unsigned char)s[j]) ||
		    s[j] == '.' || s[j] == '='); j++)
			;
		if (j - pl >= pre[k].min)
			return j;
	}
	return 0;
}

void
vg_policy_redact(const char *command, struct vg_buf *out)
{
	const char *s = command;
	size_t n = strlen(command), i = 0, e, k;

	while (i < n) {
		const char *sname;

		/* Values vigil knows are secret (from ${{ env.* }}, or of
		 * variables whose names look secret): by value. */
		if ((k = vg_secret_at(s + i, n - i, &sname)) > 0) {
			vg_buf_printf(out, "[redacted:%s]", sname);
			i += k;
			continue;
		}
		/* PEM private keys */
		if (n - i > 11 && memcmp(s + i, "-----BEGIN ", 11) == 0 &&
		    (e = (size_t)(strstr(s + i, "PRIVATE KEY-----") ?
		    strstr(s + i, "PRIVATE KEY-----") - s : 0)) > i) {
			const char *end = strstr(s + e + 16, "-----END");

			vg_buf_adds(out, "-----BEGIN PRIVATE KEY-----***");
			if (end == NULL) {
				i = n;
				break;
			}
			e = (size_t)(end - s);
			end = strstr(s + e + 8, "-----");
			i = end ? (size_t)(end - s) + 5 : n;
			vg_buf_adds(out, "-----END PRIVATE KEY-----");
			continue;
		}
		/* Tokens by shape, at a word start. */
		if ((i == 0 || !is_word((unsigned char)s[i - 1])) &&
		    (k = token_len(s + i, n - i)) > 0) {
			vg_buf_adds(out, "***");
			i += k;
			continue;
		}
		/* scheme://user:password@host */
		if (n - i > 3 && memcmp(s + i, "://", 3) == 0) {
			size_t j = i + 3, colon = 0;

			while (j < n && s[j] != '@' && s[j] != '/' &&
			    s[j] != ' ' && s[j] != '\'' && s[j] != '"') {
				if (s[j] == ':' && colon == 0)
					colon = j;
				j++;
			}
			if (j < n && s[j] == '@' && colon > 0) {
				vg_buf_add(out, s + i, colon + 1 - i);
				vg_buf_adds(out, "***");
				i = j;
				continue;
			}
		}
		/* NAME=value and --name=value / --name value */
		if (is_word((unsigned char)s[i]) && (i == 0 ||
		    !is_word((unsigned char)s[i - 1]))) {
			size_t j = i;

			while (j < n && is_word((unsigned char)s[j]))
				j++;
			if (j < n && s[j] == '=' && vg_secret_name(s + i, j - i)) {
				vg_buf_add(out, s + i, j + 1 - i);
				e = value_end(s, n, j + 1);
				mask(out, s, j + 1, e);
				i = e;
				continue;
			}
			if (j - i > 2 && s[i] == '-' && s[i + 1] == '-' &&
			    j < n && s[j] == ' ' && vg_secret_name(s + i + 2,
			    j - i - 2)) {
				vg_buf_add(out, s + i, j + 1 - i);
				e = value_end(s, n, j + 1);
				mask(out, s, j + 1, e);
				i = e;
				continue;
			}
			/* Headers: "Authorization: Bearer x", "X-Api-Key: x" */
			if (j + 1 < n && s[j] == ':' && s[j + 1] == ' ' &&
			    (vg_icontains(s + i, j - i, "AUTHORIZATION") ||
			    vg_secret_name(s + i, j - i))) {
				size_t v = j + 2, w;

				vg_buf_add(out, s + i, v - i);
				w = v;
				while (w < n && s[w] != ' ' && s[w] != '"' &&
				    s[w] != '\'')
					w++;
				if (w < n && s[w] == ' ' && w - v <= 8) {
					vg_buf_add(out, s + v, w + 1 - v);
					v = w + 1;
				}
				vg_buf_adds(out, "***");
				while (v < n && s[v] != '"' && s[v] != '\'' &&
				    s[v] != ' ')
					v++;
				i = v;
				continue;
			}
			vg_buf_add(out, s + i, j - i);
			i = j;
			continue;
		}
		/* A run of bytes where no rule can start. */
		e = i + 1;
		while (e < n && !is_word((unsigned char)s[e]) && s[e] != ':')
			e++;
		vg_buf_add(out, s + i, e - i);
		i = e;
	}
}

/* Starts an audit line with its time; see policy.h.  The time is
 * written in microseconds with integer arithmetic (a printf conversion
 * costs more than the rest of a cached line), and the line's start up to
 * the whole seconds is kept per thread: consecutive lines share it. */
void
vg_policy_audit_line_head(struct vg_buf *b, double time)
{
	static _Thread_local unsigned long long sec = ~0ull;
	static _Thread_local char head[40];
	static _Thread_local size_t hlen;
	long long us = (long long)(time * 1e6 + 0.5);
	char c[48];
	size_t n = sizeof(c);

	if (us < 0)
		us = 0;
	if ((unsigned long long)(us / 1000000) != sec) {
		sec = (unsigned long long)(us / 1000000);
		c[--n] = '.';
		vg_put_digits(c, &n, sec, 1);
		n -= 8;
		memcpy(c + n, "{\"time\":", 8);
		hlen = sizeof(c) - n;
		memcpy(head, c + n, hlen);
		n = sizeof(c);
	}
	vg_put_digits(c, &n, (unsigned long long)(us % 1000000), 6);
	n -= hlen;
	memcpy(c + n, head, hlen);
	vg_buf_add(b, c + n, sizeof(c) - n);
}

/* Writes ,"key": and s as a JSON string (escaped as vg_json_quote
 * does), or null, at o; returns the end.  o has room for 6 bytes per
 * byte of s and the key plus 8. */
static char *
put_field(char *o, const char *key, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(key);

	*o++ = ',';
	*o++ = '"';
	memcpy(o, key, n);
	o += n;
	*o++ = '"';
	*o++ = ':';
	if (s == NULL) {
		memcpy(o, "null", 4);
		return o + 4;
	}
	*o++ = '"';
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"':  *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
		}
	}
	*o++ = '"';
	return o;
}

/* Ends an audit line with every field but the time; see policy.h.  The
 * line is built in one array and appended at once (this is most of the
 * cost of auditing a command seen for the first time). */
void
vg_policy_audit_line_tail(struct vg_buf *b, const struct vg_audit_rec *r)
{
	const char *f[7] = { r->run_id, r->mode, r->verdict, r->category,
	    r->rule, r->reason, r->command };
	static const char *const key[7] = { "run", "mode", "verdict",
	    "category", "rule", "reason", "command" };
	size_t need = 64, n;
	char *line, *o, c[24];
	int k;

	for (k = 0; k < 7; k++)
		need += 16 + (f[k] != NULL ? 6 * strlen(f[k]) : 0);
	o = line = vg_xmalloc(need);
	o = put_field(o, key[0], f[0]);
	memcpy(o, ",\"task\":", 8);
	o += 8;
	if (r->task_index >= 0) {
		n = sizeof(c);
		vg_put_digits(c, &n, (unsigned long long)r->task_index, 1);
		memcpy(o, c + n, sizeof(c) - n);
		o += sizeof(c) - n;
	} else {
		memcpy(o, "null", 4);
		o += 4;
	}
	for (k = 1; k < 7; k++)
		o = put_field(o, key[k], f[k]);
	*o++ = '}';
	*o++ = '\n';
	vg_buf_add(b, line, (size_t)(o - line));
	free(line);
}

/* Formats one record as a JSON line; see audit.h. */
void
pl_audit_line(struct vg_buf *b, const struct vg_audit_rec *r)
{
	vg_policy_audit_line_head(b, r->time);
	vg_policy_audit_line_tail(b, r);
}

/*
 * Opens the audit log for appending: never through a link at its name,
 * never a FIFO (which would hang vigil), a device or a file with other
 * hard links, and only a file of vigil's own user: what a task or
 * another user planted at the path is refused, not appended to.  Its
 * directory is adopted first (common/adopt.h: root's or the user's,
 * and so is every directory on the way, sticky when others may write
 * it), and the file opened beneath it: no one else can swap the
 * directory the name is looked up in.
 */
static int
audit_open(const char *path, struct vg_err *e)
{
	char what[PATH_MAX + 16], *dir;
	const char *base, *slash = strrchr(path, '/');
	int dfd, fd, rc;

	dir = slash == NULL ? vg_xstrdup(".") : slash == path ?
	    vg_xstrdup("/") : vg_xstrndup(path, (size_t)(slash - path));
	base = slash == NULL ? path : slash + 1;
	snprintf(what, sizeof(what), "audit log '%s': its directory", path);
	dfd = vg_adopt_dir(dir, 0700, VG_ADOPT_SHARED, what, e);
	free(dir);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
	    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
	close(dfd);
	if (fd < 0) {
		if (errno == ELOOP)
			return vg_err_set(e, VG_EDENIED, "audit log '%s' is a "
			    "symbolic link; vigil appends only to a file "
			    "there, never through a link", path);
		if (errno == ENXIO)
			return vg_err_set(e, VG_EDENIED, "audit log '%s' is "
			    "not a regular file (a FIFO?); refusing it", path);
		return vg_err_errno(e, "cannot open audit log '%s'", path);
	}
	snprintf(what, sizeof(what), "audit log '%s'", path);
	if ((rc = vg_beneath_own(fd, what, e)) != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* Writes held lines in one write(2); see audit.h. */
int
pl_audit_write(const char *path, int *fd, struct vg_buf *b,
    struct vg_err *e)
{
	ssize_t nw;
	int rc = 0;

	if (b->len == 0)
		return 0;
	if (*fd < 0 && (*fd = audit_open(path, e)) < 0) {
		rc = *fd;
		*fd = -1;
		goto out;
	}
	nw = write(*fd, b->data, b->len);
	if (nw < 0 || (size_t)nw != b->len)
		rc = vg_err_errno(e, "cannot write audit log '%s'", path);
out:
	vg_buf_reset(b);
	return rc;
}

/* Appends one JSON line to path; see audit.h. */
int
pl_audit_append(const char *path, const struct vg_audit_rec *r,
    struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	int fd = -1, rc;

	pl_audit_line(&b, r);
	rc = pl_audit_write(path, &fd, &b, e);
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = vg_err_errno(e, "cannot write audit log '%s'", path);
	vg_buf_release(&b);
	return rc;
}

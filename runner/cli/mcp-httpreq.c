/*
 * mcp-httpreq.c - the head of one HTTP/1.1 request (RFC 9112), read
 * from untrusted bytes for vigil mcp --listen.  Strict and bounded: a
 * fixed head size and field count, CRLF line ends, no folded lines, no
 * control characters, one Content-Length of digits only under a
 * maximum; a transfer coding (chunked) is refused, as are second copies
 * of the fields a security decision reads.  What the request means
 * (authorization, origin, method, path) is mcp-http.c's to judge.
 */
#include <string.h>
#include <strings.h>

#include "runner/cli/mcp-http.h"

/* Fields of which a second copy is refused: each decides something. */
static const char *const single[] = { "content-length", "host",
    "authorization", "origin", "content-type", "mcp-session-id",
    "mcp-protocol-version", NULL };

/* RFC 9110 tchar: the characters of a token. */
static int
is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A field value's character: visible, space, tab or obs-text. */
static int
is_vchar(unsigned char c)
{
	return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f);
}

/* Finds the CRLFCRLF ending the head in n bytes of p; its offset after
 * it, or 0. */
static size_t
head_end(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 3 < n; i++)
		if (p[i] == '\r' && p[i + 1] == '\n' && p[i + 2] == '\r' &&
		    p[i + 3] == '\n')
			return i + 4;
	return 0;
}

/* Refuses with status and a message. */
static int
refuse(int *status, int code, struct vg_err *e, const char *msg)
{
	*status = code;
	vg_err_set(e, VG_EINVAL, "%s", msg);
	return -1;
}

/* Does the comma-separated list v hold token t (case aside)? */
static int
has_token(const char *v, const char *t)
{
	size_t n = strlen(t);

	while (v != NULL && *v != '\0') {
		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		if (strncasecmp(v, t, n) == 0 && (v[n] == '\0' || v[n] == ','
		    || v[n] == ' ' || v[n] == '\t'))
			return 1;
		v = strchr(v, ',');
	}
	return 0;
}

/* Reads the request line in [p, end) (NUL at end). */
static int
parse_line(char *p, char *end, size_t max_target, struct vg_httpreq *r,
    int *status, struct vg_err *e)
{
	char *sp1, *sp2;
	size_t k;

	sp1 = memchr(p, ' ', (size_t)(end - p));
	if (sp1 == NULL || sp1 == p || sp1 - p > 16)
		return refuse(status, 400, e, "malformed request line: "
		    "METHOD TARGET HTTP/1.1 expected");
	for (k = 0; p + k < sp1; k++)
		if (p[k] < 'A' || p[k] > 'Z')
			return refuse(status, 400, e, "malformed request line: "
			    "the method is upper-case letters");
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (sp2 == NULL || sp2 == sp1 + 1)
		return refuse(status, 400, e, "malformed request line: "
		    "METHOD TARGET HTTP/1.1 expected");
	if ((size_t)(sp2 - sp1 - 1) > max_target)
		return refuse(status, 414, e, "request target over the limit "
		    "of 2048 bytes");
	for (k = 1; sp1 + k < sp2; k++)
		if ((unsigned char)sp1[k] <= 0x20 ||
		    (unsigned char)sp1[k] >= 0x7f)
			return refuse(status, 400, e, "malformed request line: "
			    "a control or non-ASCII character in the target");
	if (end - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/", 5) != 0 ||
	    sp2[7] != '.')
		return refuse(status, 400, e, "malformed request line: "
		    "HTTP/1.1 expected at its end");
	if (sp2[6] != '1' || (sp2[8] != '0' && sp2[8] != '1'))
		return refuse(status, 505, e, "only HTTP/1.0 and HTTP/1.1 are "
		    "served");
	*sp1 = '\0';
	*sp2 = '\0';
	r->method = p;
	r->target = sp1 + 1;
	r->minor = sp2[8] - '0';
	return 0;
}

/* Reads one field line in [p, end) (NUL at end) into r. */
static int
parse_field(char *p, char *end, struct vg_httpreq *r, int *status,
    struct vg_err *e)
{
	char *colon, *v, *ve, *q;
	size_t k;

	if (*p == ' ' || *p == '\t')
		return refuse(status, 400, e, "folded header lines (obs-fold) "
		    "are not accepted");
	for (colon = p; colon < end && is_tchar((unsigned char)*colon);
	    colon++)
		*colon = (char)(*colon >= 'A' && *colon <= 'Z' ?
		    *colon + 32 : *colon);
	if (colon == p || colon == end || *colon != ':')
		return refuse(status, 400, e, "malformed header field: NAME: "
		    "VALUE expected (a token, a colon with no space before "
		    "it)");
	for (q = colon + 1; q < end; q++)
		if (!is_vchar((unsigned char)*q))
			return refuse(status, 400, e, "a control character in "
			    "a header field's value");
	if (r->nfields == VG_HTTP_MAX_FIELDS)
		return refuse(status, 431, e, "more than 64 header fields");
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	for (ve = end; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
		;
	*ve = '\0';
	for (k = 0; single[k] != NULL; k++)
		if (strcmp(p, single[k]) == 0 && vg_httpreq_field(r, p) !=
		    NULL) {
			*status = 400;
			vg_err_set(e, VG_EINVAL, "header field '%s' given "
			    "twice", p);
			return -1;
		}
	r->fields[r->nfields].name = p;
	r->fields[r->nfields++].value = v;
	return 0;
}

/* Reads Content-Length (digits only, at most max_body). */
static int
parse_length(struct vg_httpreq *r, size_t max_body, int *status,
    struct vg_err *e)
{
	const char *v = vg_httpreq_field(r, "content-length");
	size_t n = 0;

	if (v == NULL)
		return 0;
	if (*v == '\0')
		return refuse(status, 400, e, "Content-Length is empty");
	for (; *v != '\0'; v++) {
		if (*v < '0' || *v > '9')
			return refuse(status, 400, e, "Content-Length must be "
			    "decimal digits");
		if (n > (max_body - (size_t)(*v - '0')) / 10) {
			*status = 413;
			vg_err_set(e, VG_ELIMIT, "request body over the "
			    "limit of %zu bytes", max_body);
			return -1;
		}
		n = n * 10 + (size_t)(*v - '0');
	}
	r->body_len = n;
	r->has_length = 1;
	return 0;
}

int
vg_httpreq_parse(char *buf, size_t len, size_t max_body,
    struct vg_httpreq *r, int *status, struct vg_err *e)
{
	size_t skip = 0, end, avail;
	char *p, *eol, *stop;
	const char *conn;

	memset(r, 0, sizeof(*r));
	*status = 0;
	while (skip + 1 < len && skip < 8 && buf[skip] == '\r' &&
	    buf[skip + 1] == '\n')
		skip += 2;
	avail = len - skip;
	if (avail > VG_HTTP_MAX_HEAD)
		avail = VG_HTTP_MAX_HEAD;
	if ((end = head_end(buf + skip, avail)) == 0) {
		if (len - skip >= VG_HTTP_MAX_HEAD)
			return refuse(status, 431, e, "request head over the "
			    "limit of 16384 bytes");
		return 0;
	}
	p = buf + skip;
	stop = p + end - 2;	/* the final empty line's CR */
	for (eol = p; eol < stop; eol++)
		if (*eol == '\0' || (*eol == '\r' && eol[1] != '\n') ||
		    (*eol == '\n' && (eol == p || eol[-1] != '\r')))
			return refuse(status, 400, e, "a NUL, or a CR or LF "
			    "alone, in the request head");
	/* Every CR in [p, stop] is followed by LF: the first ends a line. */
	eol = memchr(p, '\r', (size_t)(stop - p + 1));
	*eol = '\0';
	if (parse_line(p, eol, VG_HTTP_MAX_TARGET, r, status, e) != 0)
		return -1;
	for (p = eol + 2; p < stop; p = eol + 2) {
		eol = memchr(p, '\r', (size_t)(stop - p + 1));
		*eol = '\0';
		if (parse_field(p, eol, r, status, e) != 0)
			return -1;
	}
	if (vg_httpreq_field(r, "transfer-encoding") != NULL)
		return refuse(status, 501, e, "transfer codings (chunked) are "
		    "not accepted: send the body with Content-Length");
	if (parse_length(r, max_body, status, e) != 0)
		return -1;
	if (r->minor == 1 && vg_httpreq_field(r, "host") == NULL)
		return refuse(status, 400, e, "HTTP/1.1 requires a Host "
		    "field");
	conn = vg_httpreq_field(r, "connection");
	r->keep_alive = r->minor == 1 ? !has_token(conn, "close") :
	    has_token(conn, "keep-alive");
	r->expect_continue = has_token(vg_httpreq_field(r, "expect"),
	    "100-continue");
	r->head_len = skip + end;
	return 1;
}

const char *
vg_httpreq_field(const struct vg_httpreq *r, const char *name)
{
	size_t k;

	for (k = 0; k < r->nfields; k++)
		if (strcmp(r->fields[k].name, name) == 0)
			return r->fields[k].value;
	return NULL;
}

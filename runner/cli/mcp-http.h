/*
 * mcp-http.h - the Streamable HTTP transport of vigil mcp (--listen,
 * docs/mcp.md).
 *
 * mcp-httpreq.c parses the head of one HTTP/1.1 request from untrusted
 * bytes under fixed limits and leaves every decision to its caller;
 * mcp-listen.c makes the listening socket (a loopback port or a unix
 * socket) and the bearer token; mcp-http.c is the front: one poll loop
 * over the connections, each MCP session served by a child process
 * running the stdio server (vg_mcp_serve) on a socket pair.
 */
#ifndef VG_MCP_HTTP_H
#define VG_MCP_HTTP_H

#include <stddef.h>
#include <sys/types.h>

#include "common/err.h"
#include "runner/cli/mcp.h"

/* Most bytes of a request's line and header fields, CRLFs included. */
#define VG_HTTP_MAX_HEAD	((size_t)16 << 10)
/* Most header fields of a request. */
#define VG_HTTP_MAX_FIELDS	64
/* Most bytes of a request target. */
#define VG_HTTP_MAX_TARGET	2048

/* One header field: name lowercased, value without surrounding space;
 * both NUL-terminated inside the parsed buffer. */
struct vg_http_field {
	const char	*name;
	const char	*value;
};

/* The head of one request, pointing into the buffer it was parsed
 * from (which the parse changed: it wrote NULs and lowercased names). */
struct vg_httpreq {
	const char		*method;
	const char		*target;
	int			 minor;		/* HTTP/1.minor */
	size_t			 head_len;	/* bytes of the head */
	size_t			 body_len;	/* Content-Length */
	int			 has_length;
	int			 keep_alive;
	int			 expect_continue;
	size_t			 nfields;
	struct vg_http_field	 fields[VG_HTTP_MAX_FIELDS];
};

/*
 * Parses the head of the request at the start of buf (len bytes).
 * Returns 0 when the head is not complete yet (nothing changed), 1 when
 * it is (r filled, buf changed in place), or -1 when the request must be
 * refused: *status is the HTTP status to answer (400 malformed, 413 body
 * over max_body, 431 head over VG_HTTP_MAX_HEAD or too many fields, 501
 * a transfer coding, 505 not HTTP/1.x) and e says what was wrong.
 * Leading empty lines are skipped; lines end with CRLF; folded lines,
 * control characters, a space before a colon and a second
 * Content-Length, Host, Authorization, Origin, Content-Type or
 * Mcp-Session-Id are refused.  Never blocks, never allocates.
 */
int	vg_httpreq_parse(char *buf, size_t len, size_t max_body,
	    struct vg_httpreq *r, int *status, struct vg_err *e);

/* The value of field name (lowercase), NULL when absent. */
const char *vg_httpreq_field(const struct vg_httpreq *r, const char *name);

/* ---- the listening socket and the token (mcp-listen.c) ---- */

/* Where the server listens. */
struct vg_mcp_listen {
	int		 fd;		/* listening, non-blocking */
	int		 is_unix;
	char		*path;		/* unix: the socket's path */
	dev_t		 dev;		/* unix: the file made */
	ino_t		 ino;
	char		 host[64];	/* TCP: "127.0.0.1", "[::1]" */
	int		 port;		/* TCP: the port bound */
};

/*
 * Parses addr (HOST:PORT with HOST 127.x.y.z, [::1] or localhost, port
 * 0 for any free one; or unix:PATH) and listens there: a TCP address
 * must be loopback, a unix socket is made with mode 0600 and never over
 * anything at PATH (a link, a file; a dead socket of this user's is
 * replaced).  Returns 0 or a negative vg_rc with e naming addr and what
 * is valid.
 */
int	vg_mcp_listen_open(const char *addr, struct vg_mcp_listen *l,
	    struct vg_err *e);
/* Closes l and removes its unix socket (when it is still the one made). */
void	vg_mcp_listen_close(struct vg_mcp_listen *l);

/* Most bytes of a token file. */
#define VG_MCP_TOKEN_MAX	4096

/*
 * The bearer token: read from path (a regular file of the effective
 * user, no access for group or others, not followed when a link, at
 * least 16 printable characters without spaces, one final newline
 * allowed), or when path is NULL 32 random bytes from getrandom(2) in
 * hex.  Returns the token (the caller's) or NULL with e.
 */
char	*vg_mcp_token(const char *path, struct vg_err *e);

/* ---- the front (mcp-http.c) ---- */

/* Serves MCP over HTTP on l with token until SIGTERM, SIGINT or SIGHUP;
 * returns an exit status. */
int	vg_mcp_serve_http(const struct vg_mcp_conf *conf,
	    struct vg_mcp_listen *l, const char *token);

#endif

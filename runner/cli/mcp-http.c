/*
 * mcp-http.c - the Streamable HTTP transport of vigil mcp (--listen):
 * one POST endpoint, /mcp, for JSON-RPC messages; DELETE ends a
 * session; GET (a server-initiated stream) is answered 405.
 *
 * One process, one poll loop: it accepts connections, reads requests
 * (mcp-httpreq.c), judges them (Host and Origin loopback, the bearer
 * token, the session) and answers.  Each MCP session (made at
 * initialize, named by the Mcp-Session-Id header after) is a child
 * process running the stdio server, vg_mcp_serve, on one end of a
 * socket pair: a POSTed message goes to it as one line, and each line it
 * writes goes back to the connection waiting for that request id (a
 * response) or holding that progress token (notifications/progress, on
 * a text/event-stream response).  A connection that closes while its
 * request runs sends the child notifications/cancelled for it, which
 * kills the command's process tree; DELETE, an idle session or the
 * server's end close the pair, and the child stops what runs and closes
 * the vigil sessions it opened, as at the end of stdio.  The sessions'
 * side (their children, the routing of their lines) is
 * runner/cli/mcp-http-sess.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/path.h"
#include "common/proc.h"
#include "runner/cli/mcp-http-int.h"
#include "runner/manifest/manifest.h"

static volatile sig_atomic_t front_stop;

/* SIGTERM, SIGINT, SIGHUP: the server ends. */
static void
on_signal(int sig)
{
	(void)sig;
	front_stop = 1;
}

/* The reason phrase of status. */
static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 202: return "Accepted";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}

/* Queues a whole response on c: status, extra header lines (each ending
 * in CRLF, or NULL), a JSON body (or NULL). */
static void
respond(struct conn *c, int status, const char *extra, const char *body)
{
	size_t n = body != NULL ? strlen(body) : 0;

	vg_buf_printf(&c->out, "HTTP/1.1 %d %s\r\n", status, reason(status));
	if (n > 0)
		vg_buf_adds(&c->out, "Content-Type: application/json\r\n");
	vg_buf_printf(&c->out, "Content-Length: %zu\r\n%s%s\r\n", n,
	    extra != NULL ? extra : "", c->close_after ?
	    "Connection: close\r\n" : "");
	if (n > 0)
		vg_buf_add(&c->out, body, n);
}

/* Queues an error response with a JSON-RPC error body (id NULL: null). */
void
vg_mcph_respond_error(struct conn *c, int status, const char *extra,
    const char *id, int code, const char *msg)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_rpc_write_error(&b, id, code, msg);
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	respond(c, status, extra, vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Refuses the request being read and closes c after: its body (if any)
 * is not read. */
static void
refuse(struct conn *c, int status, const char *extra, const char *msg)
{
	c->close_after = 1;
	vg_mcph_respond_error(c, status, extra, NULL, status == 401 ||
	    status == 403 ? -32001 : VG_RPC_INVALID_REQUEST, msg);
	fprintf(stderr, "vigil: mcp: refused a request: %d %s\n", status,
	    msg);
}

/* Is host (a Host value, or an Origin without its scheme) this
 * server's own loopback name? */
static int
own_host(const struct front *f, const char *host)
{
	char want[96];
	const char *names[] = { "localhost", "127.0.0.1", "[::1]", NULL };
	size_t n;
	int k;

	if (!f->l->is_unix) {
		snprintf(want, sizeof(want), "%s:%d", f->l->host, f->l->port);
		if (strcasecmp(host, want) == 0)
			return 1;
		snprintf(want, sizeof(want), "localhost:%d", f->l->port);
		return strcasecmp(host, want) == 0;
	}
	for (k = 0; names[k] != NULL; k++) {
		n = strlen(names[k]);
		if (strncasecmp(host, names[k], n) == 0 && (host[n] == '\0' ||
		    (host[n] == ':' && host[n + 1] != '\0' &&
		    strspn(host + n + 1, "0123456789") ==
		    strlen(host + n + 1))))
			return 1;
	}
	return 0;
}

/* Is the Authorization value a the bearer token?  Compares in time
 * that does not depend on where they differ. */
static int
authorized(const struct front *f, const char *a)
{
	size_t n = strlen(f->token), k;
	unsigned char d = 0;

	if (a == NULL || strncasecmp(a, "Bearer ", 7) != 0)
		return 0;
	a += 7;
	while (*a == ' ')
		a++;
	if (strlen(a) != n)
		return 0;
	for (k = 0; k < n; k++)
		d |= (unsigned char)(a[k] ^ f->token[k]);
	return d == 0;
}

/* Is media type t (e.g. "application/json") in the Accept value a? */
static int
accepts(const char *a, const char *t)
{
	return a != NULL && strcasestr(a, t) != NULL;
}

/* Judges a request's head: the checks every request passes, then its
 * method's.  0 when its body is to be read; else it was answered. */
static int
judge_head(struct front *f, struct conn *c, const struct vg_httpreq *r)
{
	const char *host = vg_httpreq_field(r, "host");
	const char *origin = vg_httpreq_field(r, "origin");
	const char *ct = vg_httpreq_field(r, "content-type");
	const char *accept = vg_httpreq_field(r, "accept");
	static const char allow[] = "Allow: POST, DELETE\r\n";

	/* DNS rebinding: a page of another origin reaching a loopback port
	 * by a name of its own has a foreign Host or Origin. */
	if (host == NULL || !own_host(f, host)) {
		refuse(c, 403, NULL, "the Host is not this server's loopback "
		    "address");
		return -1;
	}
	if (origin != NULL && (f->l->is_unix || strncasecmp(origin, "http://",
	    7) != 0 || !own_host(f, origin + 7))) {
		refuse(c, 403, NULL, "the Origin is not this server's own");
		return -1;
	}
	if (!authorized(f, vg_httpreq_field(r, "authorization"))) {
		refuse(c, 401, "WWW-Authenticate: Bearer\r\n", "a bearer token "
		    "is required (Authorization: Bearer TOKEN, the token "
		    "vigil mcp printed or read from --token-file)");
		return -1;
	}
	if (strcmp(r->target, "/mcp") != 0 && strncmp(r->target, "/mcp?", 5)
	    != 0) {
		refuse(c, 404, NULL, "the MCP endpoint is /mcp");
		return -1;
	}
	if (strcmp(r->method, "GET") == 0) {
		refuse(c, 405, allow, "no server-initiated stream: POST "
		    "requests to /mcp");
		return -1;
	}
	if (strcmp(r->method, "DELETE") != 0 && strcmp(r->method, "POST")
	    != 0) {
		refuse(c, 405, allow, "methods served: POST, DELETE");
		return -1;
	}
	if (strcmp(r->method, "POST") == 0) {
		if (!r->has_length) {
			refuse(c, 411, NULL, "a POST needs Content-Length");
			return -1;
		}
		if (ct == NULL || strncasecmp(ct, "application/json", 16) !=
		    0 || (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ')) {
			refuse(c, 415, NULL, "Content-Type must be "
			    "application/json");
			return -1;
		}
		if (accept != NULL && !accepts(accept, "application/json") &&
		    !accepts(accept, "text/event-stream") &&
		    !accepts(accept, "*/*")) {
			refuse(c, 406, NULL, "Accept must allow "
			    "application/json or text/event-stream");
			return -1;
		}
	}
	/* The stream is chunked: HTTP/1.1 only. */
	c->sse_ok = r->minor == 1 && accepts(accept, "text/event-stream");
	c->keep_alive = r->keep_alive;
	free(c->session);
	free(c->version);
	c->session = vg_xstrdup(vg_httpreq_field(r, "mcp-session-id"));
	c->version = vg_xstrdup(vg_httpreq_field(r,
	    "mcp-protocol-version"));
	return 0;
}

/* The progress token of request m (JSON text), or NULL. */
static char *
progress_token(const struct vg_rpc_msg *m)
{
	const struct vg_json_value *t = vg_json_get(vg_json_get(m->params,
	    "_meta"), "progressToken");
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;

	if (t == NULL || (t->type != VG_JSON_STRING && t->type !=
	    VG_JSON_NUMBER))
		return NULL;
	vg_json_writer_init(&w, &b);
	vg_json_value_write(&w, t);
	return vg_buf_detach(&b);
}

/* A POSTed message whose session is s: forwarded as one line. */
static void
post_forward(struct front *f, struct conn *c, struct msess *s,
    struct vg_rpc_msg *m)
{
	struct vg_buf line = VG_BUF_INIT;
	struct vg_json_writer w;
	const struct vg_json_value *rid;
	struct conn *o;

	s->last = vg_mono();
	vg_json_writer_init(&w, &line);
	vg_json_value_write(&w, vg_json_root(m->doc));
	if (m->kind == VG_RPC_REQUEST &&
	    vg_mcph_waiting_for(f, s, m->id, 0) != NULL) {
		vg_mcph_respond_error(c, 400, NULL, m->id, VG_RPC_INVALID_REQUEST,
		    "a request with this id is in progress");
		goto out;
	}
	vg_mcph_sess_send(s, vg_buf_str(&line));
	if (m->kind != VG_RPC_REQUEST) {
		/* A cancelled request gets no answer: its stream ends. */
		if (m->method != NULL && strcmp(m->method,
		    "notifications/cancelled") == 0 && (rid = vg_json_get(
		    m->params, "requestId")) != NULL) {
			vg_buf_reset(&line);
			vg_json_writer_init(&w, &line);
			vg_json_value_write(&w, rid);
			if ((o = vg_mcph_waiting_for(f, s, vg_buf_str(&line), 0)) !=
			    NULL)
				vg_mcph_conn_unwait(o, 0);
		}
		respond(c, 202, NULL, NULL);
		goto out;
	}
	c->sess = s;
	c->id = m->id;
	m->id = NULL;
	c->progress = progress_token(m);
	c->init = strcmp(m->method, "initialize") == 0;
	if (c->sse_ok && strcmp(m->method, "tools/call") == 0)
		vg_mcph_sse_open(c);
out:
	vg_buf_release(&line);
}

/* Acts on a whole POST: body is the JSON-RPC message. */
static void
do_post(struct front *f, struct conn *c, const char *body, size_t n)
{
	struct vg_rpc_msg m;
	struct msess *s;
	struct vg_err e;
	int code;

	vg_err_init(&e);
	if ((code = vg_rpc_read(body, n, &m, &e)) != 0) {
		vg_mcph_respond_error(c, 400, NULL, m.id, code, e.msg);
		goto out;
	}
	if (m.kind == VG_RPC_REQUEST && strcmp(m.method, "initialize") == 0) {
		if (c->session != NULL) {
			vg_mcph_respond_error(c, 400, NULL, m.id,
			    VG_RPC_INVALID_REQUEST, "initialize starts a "
			    "session: send it without Mcp-Session-Id");
		} else if ((s = vg_mcph_sess_new(f, &e)) == NULL) {
			vg_mcph_respond_error(c, 503, NULL, m.id, VG_RPC_INTERNAL,
			    e.msg);
		} else {
			post_forward(f, c, s, &m);
		}
		goto out;
	}
	if (c->session == NULL) {
		vg_mcph_respond_error(c, 400, NULL, m.id, VG_RPC_INVALID_REQUEST,
		    "Mcp-Session-Id is required: initialize first");
	} else if ((s = vg_mcph_sess_find(f, c->session)) == NULL) {
		vg_mcph_respond_error(c, 404, NULL, m.id, -32001, "no such session: "
		    "it ended, initialize again");
	} else if (c->version != NULL && !vg_mcp_revision_served(
	    c->version)) {
		vg_mcph_respond_error(c, 400, NULL, m.id, VG_RPC_INVALID_REQUEST,
		    "MCP-Protocol-Version is not a revision served "
		    "(2025-06-18, 2025-03-26, 2024-11-05)");
	} else {
		post_forward(f, c, s, &m);
	}
out:
	vg_rpc_msg_release(&m);
}

/* DELETE: ends the session named. */
static void
do_delete(struct front *f, struct conn *c)
{
	struct msess *s;

	if (c->session == NULL) {
		vg_mcph_respond_error(c, 400, NULL, NULL, VG_RPC_INVALID_REQUEST,
		    "Mcp-Session-Id is required");
	} else if ((s = vg_mcph_sess_find(f, c->session)) == NULL) {
		vg_mcph_respond_error(c, 404, NULL, NULL, -32001, "no such session");
	} else {
		vg_mcph_sess_end(f, s, "the client ended it");
		respond(c, 200, NULL, NULL);
	}
}

/* Reads and acts on the requests in c's buffer, one at a time. */
void
vg_mcph_conn_requests(struct front *f, struct conn *c)
{
	struct vg_httpreq r;
	struct vg_err e;
	int rc, status;

	/* A client that does not read its answers gets no more. */
	while (!c->close_after && c->sess == NULL && c->in.len > 0 &&
	    c->out.len < OUT_HIGH) {
		if (!c->have_head) {
			vg_err_init(&e);
			rc = vg_httpreq_parse(c->in.data, c->in.len,
			    VG_RPC_MAX_MESSAGE, &r, &status, &e);
			if (rc == 0)
				return;
			if (rc < 0) {
				refuse(c, status, NULL, e.msg);
				return;
			}
			if (judge_head(f, c, &r) != 0)
				return;
			c->have_head = 1;
			c->head_len = r.head_len;
			c->need = r.head_len + r.body_len;
			if (c->in.len < c->need && r.expect_continue)
				vg_buf_adds(&c->out, "HTTP/1.1 100 Continue"
				    "\r\n\r\n");
			/* DELETE: the method is all. */
			c->is_delete = strcmp(r.method, "DELETE") == 0;
		}
		if (c->in.len < c->need)
			return;
		c->have_head = 0;
		if (c->is_delete)
			do_delete(f, c);
		else
			do_post(f, c, c->in.data + c->head_len, c->need -
			    c->head_len);
		if (!c->keep_alive)
			c->close_after = 1;
		memmove(c->in.data, c->in.data + c->need, c->in.len - c->need);
		c->in.len -= c->need;
		c->since = vg_mono();
	}
}

/* Marks c gone; a request it waits for is cancelled. */
static void
conn_gone(struct conn *c, const char *why)
{
	if (c->sess != NULL && c->id != NULL) {
		fprintf(stderr, "vigil: mcp: the client of request %s in "
		    "session %s %s: cancelled\n", c->id, c->sess->id, why);
		vg_mcph_cancel_for(c, "the HTTP client went away");
	}
	c->dead = 1;
}

/* Reads what c's client sent. */
static void
conn_read(struct front *f, struct conn *c)
{
	char buf[65536];
	ssize_t n = read(c->fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0 && c->lingering) {
		c->dead = 1;
		return;
	}
	if (n <= 0 && c->sess == NULL && c->out.len > 0) {
		c->eof = c->close_after = 1;	/* its answer goes first */
		return;
	}
	if (n <= 0) {
		conn_gone(c, "disconnected");
		return;
	}
	if (c->close_after)
		return;		/* refused: what follows is not read */
	/* A new request's clock starts at its first byte. */
	if (c->in.len == 0 && !c->have_head && c->sess == NULL)
		c->since = vg_mono();
	vg_buf_add(&c->in, buf, (size_t)n);
	/* Sent ahead while a request runs: at most one more request. */
	if (c->in.len > VG_HTTP_MAX_HEAD + VG_RPC_MAX_MESSAGE + sizeof(buf)) {
		conn_gone(c, "sent more than one request ahead");
		return;
	}
	vg_mcph_conn_requests(f, c);
}

/* Writes what c has queued; then reads its next request, if any. */
static void
conn_write(struct front *f, struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out.len) {
		n = send(c->fd, c->out.data + c->out_off, c->out.len -
		    c->out_off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn_gone(c, "stopped reading");
			return;
		}
		c->out_off += (size_t)n;
	}
	vg_buf_reset(&c->out);
	c->out_off = 0;
	if (!c->close_after) {
		vg_mcph_conn_requests(f, c);
		return;
	}
	/* Closing at once with unread bytes would reset the connection
	 * and could lose the answer: its end is sent, what the client
	 * still sends is read and dropped until it closes (or 2 s). */
	if (c->close_after && (c->eof || shutdown(c->fd, SHUT_WR) != 0)) {
		c->dead = 1;
	} else if (c->close_after && !c->lingering) {
		c->lingering = 1;
		c->since = vg_mono();
	}
}

/* Frees c. */
static void
conn_free(struct conn *c)
{
	close(c->fd);
	vg_buf_release(&c->in);
	vg_buf_release(&c->out);
	free(c->session);
	free(c->version);
	free(c->id);
	free(c->progress);
	free(c);
}

/* Accepts a connection. */
static void
accept_one(struct front *f)
{
	struct conn *c;
	int fd = accept4(f->l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (f->nconns == MAX_CONNS) {
		close(fd);
		return;
	}
	c = vg_xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->since = vg_mono();
	f->conns[f->nconns++] = c;
}

/* Closes what timed out: slow requests, idle connections, sessions
 * without a request for the idle limit. */
static void
timeouts(struct front *f, double now)
{
	struct conn *c;
	int k;

	for (k = 0; k < f->nconns; k++) {
		c = f->conns[k];
		if (c->lingering && now - c->since > LINGER)
			c->dead = 1;
		if (c->sess != NULL || c->close_after || c->out.len > 0)
			continue;
		if ((c->in.len > 0 || c->have_head) && now - c->since >
		    REQUEST_TIMEOUT)
			refuse(c, 408, NULL, "the request did not arrive "
			    "whole within 30 seconds");
		else if (now - c->since > CONN_IDLE)
			c->dead = 1;
	}
	for (k = 0; k < f->nsess; k++)
		if (now - f->sess[k]->last > f->idle &&
		    !vg_mcph_sess_busy(f, f->sess[k])) {
			vg_mcph_sess_end(f, f->sess[k], "idle");
			k--;
		}
}

/* One turn: waits for a connection, a client or a child, acts. */
static void
turn(struct front *f)
{
	struct pollfd p[1 + MAX_CONNS + MAX_SESSIONS];
	struct conn *c;
	struct msess *s[MAX_SESSIONS];
	int n = 0, k, nc = f->nconns, ns = f->nsess;

	p[n].fd = f->l->fd;
	p[n++].events = POLLIN;
	for (k = 0; k < nc; k++) {
		p[n].fd = f->conns[k]->fd;
		p[n++].events = (f->conns[k]->eof ? 0 : POLLIN | POLLRDHUP) |
		    (f->conns[k]->out.len > 0 ? POLLOUT : 0);
	}
	for (k = 0; k < ns; k++) {
		s[k] = f->sess[k];
		p[n].fd = s[k]->fd;
		p[n++].events = POLLIN | (s[k]->out.len > 0 ? POLLOUT : 0);
	}
	if (poll(p, (nfds_t)n, 1000) < 0) {
		if (errno != EINTR)
			front_stop = 1;
		return;
	}
	for (k = 0; k < nc; k++) {
		c = f->conns[k];
		if (!c->dead && !c->eof && (p[1 + k].revents & (POLLIN |
		    POLLHUP | POLLERR | POLLRDHUP)))
			conn_read(f, c);
		else if (c->eof && (p[1 + k].revents & (POLLHUP | POLLERR)))
			c->dead = 1;
	}
	/* Sessions by pointer: one may end while another is read. */
	for (k = 0; k < ns; k++) {
		if (vg_mcph_sess_live(f, s[k]) && (p[1 + nc + k].revents &
		    (POLLIN | POLLHUP | POLLERR)))
			vg_mcph_sess_read(f, s[k]);
	}
	for (k = 0; k < f->nsess; k++)
		vg_mcph_sess_write(f->sess[k]);
	for (k = 0; k < f->nconns; k++)
		if (!f->conns[k]->dead && f->conns[k]->out.len > 0)
			conn_write(f, f->conns[k]);
	timeouts(f, vg_mono());
	for (k = 0; k < f->nconns; k++)
		if (f->conns[k]->dead) {
			conn_free(f->conns[k]);
			f->conns[k--] = f->conns[--f->nconns];
		}
	if (p[0].revents & POLLIN)
		accept_one(f);
	vg_mcph_reap(f, 0);
}

int
vg_mcp_serve_http(const struct vg_mcp_conf *conf, struct vg_mcp_listen *l,
    const char *token)
{
	struct front f;
	struct sigaction sa;

	memset(&f, 0, sizeof(f));
	f.conf = conf;
	f.l = l;
	f.token = token;
	if (vg_parse_duration(conf->idle_timeout, &f.idle) != 0 || f.idle <= 0)
		f.idle = 1800;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!front_stop)
		turn(&f);
	/* The server ends: every session's child stops what it runs and
	 * closes its vigil sessions; the server waits for them. */
	vg_mcp_listen_close(l);
	while (f.nsess > 0)
		vg_mcph_sess_end(&f, f.sess[0], "the server ends");
	while (f.nconns > 0)
		conn_free(f.conns[--f.nconns]);
	vg_mcph_reap(&f, 1);
	return 0;
}

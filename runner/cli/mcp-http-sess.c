/*
 * mcp-http-sess.c - the MCP sessions of `vigil mcp --listen`
 * (runner/cli/mcp-http.c): each is a child process running the stdio
 * server, vg_mcp_serve, on one end of a socket pair.  A POSTed message
 * goes to it as one line; each line it writes goes back to the
 * connection waiting for that request id (a response) or holding that
 * progress token (notifications/progress, on a text/event-stream
 * response).  Ending a session closes the pair: its child stops what
 * runs and closes the vigil sessions it opened.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/path.h"
#include "common/proc.h"
#include "runner/cli/mcp-http-int.h"

/* The session named id, or NULL. */
struct msess *
vg_mcph_sess_find(struct front *f, const char *id)
{
	int k;

	for (k = 0; id != NULL && k < f->nsess; k++)
		if (strcmp(f->sess[k]->id, id) == 0)
			return f->sess[k];
	return NULL;
}

/* Is s (which may have been freed) one of the sessions? */
int
vg_mcph_sess_live(const struct front *f, const struct msess *s)
{
	int k;

	for (k = 0; k < f->nsess; k++)
		if (f->sess[k] == s)
			return 1;
	return 0;
}

/* Does a connection wait for an answer of session s? */
int
vg_mcph_sess_busy(const struct front *f, const struct msess *s)
{
	int k;

	for (k = 0; k < f->nconns; k++)
		if (f->conns[k]->sess == s && !f->conns[k]->dead)
			return 1;
	return 0;
}

/* Queues one line (with its newline) for session s's child. */
void
vg_mcph_sess_send(struct msess *s, const char *line)
{
	if (s->fd < 0)
		return;
	vg_buf_adds(&s->out, line);
	vg_buf_addc(&s->out, '\n');
}

/* Starts a session: its child serves MCP on a socket pair. */
struct msess *
vg_mcph_sess_new(struct front *f, struct vg_err *e)
{
	struct msess *s;
	unsigned char rnd[16];
	int sp[2], k;
	pid_t pid;

	if (f->nsess == MAX_SESSIONS) {
		vg_err_set(e, VG_ELIMIT, "%d MCP sessions are open: end one "
		    "(DELETE) first", MAX_SESSIONS);
		return NULL;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		vg_err_errno(e, "getrandom");
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
		vg_err_errno(e, "socketpair");
		return NULL;
	}
	fflush(stderr);
	if ((pid = fork()) < 0) {
		vg_err_errno(e, "fork");
		close(sp[0]);
		close(sp[1]);
		return NULL;
	}
	if (pid == 0) {
		/* The child keeps its end and stdio only: no other client's
		 * connection, not the listening socket. */
		vg_close_from(3, &sp[1], 1);
		signal(SIGCHLD, SIG_DFL);
		_exit(vg_mcp_serve(f->conf, sp[1], sp[1]));
	}
	close(sp[1]);
	(void)vg_fd_nonblock(sp[0]);
	s = vg_xcalloc(1, sizeof(*s));
	for (k = 0; k < (int)sizeof(rnd); k++)
		snprintf(s->id + 2 * k, 3, "%02x", rnd[k]);
	s->pid = pid;
	s->fd = sp[0];
	s->last = vg_mono();
	f->sess[f->nsess++] = s;
	fprintf(stderr, "vigil: mcp: MCP session %s started\n", s->id);
	return s;
}

/* Ends the request c waits for, answered or not: an open event stream
 * ends; without one an unanswered request's connection closes. */
void
vg_mcph_conn_unwait(struct conn *c, int answered)
{
	if (c->sse)
		vg_buf_adds(&c->out, "0\r\n\r\n");
	else if (!answered)
		c->close_after = 1;
	c->sess = NULL;
	free(c->id);
	free(c->progress);
	c->id = c->progress = NULL;
	c->sse = c->init = 0;
	c->since = vg_mono();
}

/* Ends session s: its child stops what runs and closes its sessions
 * once its end of the pair reads end of file. */
void
vg_mcph_sess_end(struct front *f, struct msess *s, const char *why)
{
	struct conn *c;
	int k;

	for (k = 0; k < f->nconns; k++) {
		c = f->conns[k];
		if (c->sess != s)
			continue;
		if (!c->sse) {
			c->close_after = 1;
			vg_mcph_respond_error(c, 404, NULL, c->id, -32001, "the "
			    "session ended");
		}
		vg_mcph_conn_unwait(c, 1);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (f->nended < (int)(sizeof(f->ended) / sizeof(f->ended[0])))
		f->ended[f->nended++] = s->pid;
	else
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	fprintf(stderr, "vigil: mcp: MCP session %s ended (%s)\n", s->id, why);
	for (k = 0; k < f->nsess; k++)
		if (f->sess[k] == s)
			f->sess[k] = f->sess[--f->nsess];
	vg_buf_release(&s->in);
	vg_buf_release(&s->out);
	free(s);
}

/* The connection waiting in session s for request id (JSON), or NULL. */
struct conn *
vg_mcph_waiting_for(struct front *f, struct msess *s, const char *id,
    int progress)
{
	struct conn *c;
	int k;

	for (k = 0; k < f->nconns; k++) {
		c = f->conns[k];
		if (c->sess == s && !c->dead && strcmp(progress ? (c->progress
		    != NULL ? c->progress : "") : c->id, id) == 0)
			return c;
	}
	return NULL;
}

/* Sends one event of an open stream on c: a chunk of the chunked
 * body holding "event: message" and the JSON line. */
static void
sse_event(struct conn *c, const char *line, size_t n)
{
	vg_buf_printf(&c->out, "%zx\r\nevent: message\ndata: ", n + 23);
	vg_buf_add(&c->out, line, n);
	vg_buf_adds(&c->out, "\n\n\r\n");
}

/* Opens the event stream of c's answer. */
void
vg_mcph_sse_open(struct conn *c)
{
	vg_buf_printf(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: "
	    "text/event-stream\r\nCache-Control: no-cache\r\n"
	    "Transfer-Encoding: chunked\r\n%s\r\n", c->keep_alive ? "" :
	    "Connection: close\r\n");
	c->sse = 1;
}

/* Delivers a line the child of s wrote. */
static void
sess_line(struct front *f, struct msess *s, const char *line, size_t n)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *v;
	struct vg_buf key = VG_BUF_INIT, extra = VG_BUF_INIT;
	struct vg_json_writer w;
	struct conn *c = NULL;
	const char *method;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_json_parse(line, n, NULL, &doc, &e) != 0)
		return;
	root = vg_json_root(doc);
	method = vg_json_get_str(root, "method", NULL);
	vg_json_writer_init(&w, &key);
	if (method == NULL && (v = vg_json_get(root, "id")) != NULL) {
		vg_json_value_write(&w, v);
		c = vg_mcph_waiting_for(f, s, vg_buf_str(&key), 0);
	} else if (method != NULL && strcmp(method,
	    "notifications/progress") == 0 && (v = vg_json_get(vg_json_get(
	    root, "params"), "progressToken")) != NULL) {
		vg_json_value_write(&w, v);
		if ((c = vg_mcph_waiting_for(f, s, vg_buf_str(&key), 1)) != NULL &&
		    c->sse)
			sse_event(c, line, n);
		goto out;
	}
	if (c == NULL)
		goto out;	/* its client is gone, or asked nothing */
	c->close_after = !c->keep_alive;
	if (c->sse) {
		sse_event(c, line, n);
	} else {
		if (c->init)
			vg_buf_printf(&extra, "Mcp-Session-Id: %s\r\n", s->id);
		vg_buf_printf(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: "
		    "application/json\r\nContent-Length: %zu\r\n%s%s\r\n", n,
		    vg_buf_str(&extra), c->close_after ? "Connection: close\r\n"
		    : "");
		vg_buf_add(&c->out, line, n);
	}
	vg_mcph_conn_unwait(c, 1);
	vg_mcph_conn_requests(f, c);	/* the next request it sent, if any */
out:
	vg_buf_release(&key);
	vg_buf_release(&extra);
	vg_json_free(doc);
}

/* Reads what the child of s wrote; ends s at its end. */
void
vg_mcph_sess_read(struct front *f, struct msess *s)
{
	char buf[65536], *nl;
	ssize_t n = read(s->fd, buf, sizeof(buf));
	size_t off = 0;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		vg_mcph_sess_end(f, s, "its server ended");
		return;
	}
	vg_buf_add(&s->in, buf, (size_t)n);
	while ((nl = memchr(s->in.data + off, '\n', s->in.len - off)) !=
	    NULL) {
		sess_line(f, s, s->in.data + off, (size_t)(nl - s->in.data -
		    off));
		off = (size_t)(nl - s->in.data) + 1;
	}
	memmove(s->in.data, s->in.data + off, s->in.len - off);
	s->in.len -= off;
}

/* notifications/cancelled for the request c waits for, to its child. */
void
vg_mcph_cancel_for(struct conn *c, const char *why)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%s,"
	    "\"reason\":\"%s\"}}", c->id, why);
	vg_mcph_sess_send(c->sess, vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Writes what session s has queued for its child. */
void
vg_mcph_sess_write(struct msess *s)
{
	ssize_t n;

	while (s->out_off < s->out.len) {
		n = send(s->fd, s->out.data + s->out_off, s->out.len -
		    s->out_off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		if (n <= 0)
			return;	/* its child is gone: the read says so */
		s->out_off += (size_t)n;
	}
	vg_buf_reset(&s->out);
	s->out_off = 0;
}

/* Reaps the children of ended sessions (all, waiting, when block). */
void
vg_mcph_reap(struct front *f, int block)
{
	int k;

	for (k = 0; k < f->nended; k++)
		if (waitpid(f->ended[k], NULL, block ? 0 : WNOHANG) != 0)
			f->ended[k--] = f->ended[--f->nended];
}

/*
 * mcp-server.c - the loop of vigil mcp over a pair of fds (stdio):
 * newline-delimited JSON-RPC messages in, replies and notifications out.
 * Each tool call and resource read runs a vigil command line
 * (mcp-tools.c) in a child: a fork of the server that calls the
 * command's code (vg_cmd_main) directly, with no new program started,
 * so a call costs no process start and the command (gate, audit, output
 * limits) is the very code `vigil exec` runs.  The loop keeps reading
 * while children run, so that a
 * notifications/cancelled stops one (SIGTERM: vigil exec kills the
 * command's process tree and ends) and a progress token gets a
 * notifications/progress every second.  When the input ends (the client
 * went away) every child is stopped the same way and the sessions this
 * server opened are closed: nothing is left running.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/path.h"
#include "common/proc.h"
#include "common/version.h"
#include "runner/cli/cmd.h"
#include "runner/cli/mcp.h"

/* Most calls in progress at once; more wait in the client. */
#define MAX_CALLS	64
/* Seconds a stopped child has to end before SIGKILL. */
#define STOP_GRACE	15.0

/* The protocol revisions served, newest first. */
static const char *const revisions[] = { "2025-06-18", "2025-03-26",
    "2024-11-05", NULL };

enum call_kind { CALL_TOOL, CALL_READ, CALL_LIST };

struct vg_mcp_call {
	enum call_kind		 kind;
	char			*id;		/* request id (JSON) */
	struct vg_json_doc	*doc;		/* the request */
	const struct vg_json_value *args;
	const struct vg_mcp_tool *tool;
	char			*uri;		/* CALL_READ */
	const char		*mime;
	char			*progress;	/* its token (JSON) */
	double			 started;
	int			 ticks;		/* progress sent */
	pid_t			 pid;
	int			 fd[2];		/* stdout, stderr */
	struct vg_buf		 out, err;
	int			 cancelled;
	double			 stopped;	/* when SIGTERM went */
};

struct server {
	const struct vg_mcp_conf *conf;
	int			 in, out;
	struct vg_buf		 inbuf;
	int			 skipping;	/* a line over the limit */
	struct vg_mcp_call	*calls[MAX_CALLS];
	int			 ncalls;
	char			*session;	/* the default session */
	struct vg_strv		 opened;	/* sessions opened here */
	struct vg_strv		 names;		/* the names given to them */
};

static volatile sig_atomic_t mcp_stop;

/* SIGTERM, SIGINT, SIGHUP: end as if the input had ended. */
static void
on_signal(int sig)
{
	(void)sig;
	mcp_stop = 1;
}

/* Writes all of b to the client and empties it. */
static void
send_buf(struct server *s, struct vg_buf *b)
{
	if (b->len > 0 && vg_write_all(s->out, b->data, b->len) != 0)
		mcp_stop = 1;	/* the client is gone */
	vg_buf_reset(b);
}

/* Sends a result (JSON text) to request id. */
static void
send_result(struct server *s, const char *id, const char *result)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_rpc_write_result(&b, id, result);
	send_buf(s, &b);
	vg_buf_release(&b);
}

/* Sends an error to request id (NULL: null). */
static void
send_error(struct server *s, const char *id, int code, const char *msg)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_rpc_write_error(&b, id, code, msg);
	send_buf(s, &b);
	vg_buf_release(&b);
}

/* Starts the vigil command line argv (argv[0] the vigil binary) in a
 * fork of the server with stdout and stderr to pipes, stdin from in
 * (NULL: /dev/null); fills c->pid and c->fd. */
static int
spawn(struct vg_mcp_call *c, char *const *argv, const char *in,
    struct vg_err *e)
{
	int po[2], pe[2], pi[2] = { -1, -1 }, devnull, argc;

	fflush(stdout);		/* nothing of ours printed twice */
	if (pipe2(po, O_CLOEXEC) != 0)
		return vg_err_errno(e, "pipe");
	if (pipe2(pe, O_CLOEXEC) != 0) {
		close(po[0]);
		close(po[1]);
		return vg_err_errno(e, "pipe");
	}
	if (in != NULL && pipe2(pi, O_CLOEXEC) != 0)
		in = NULL;
	if ((c->pid = fork()) < 0) {
		vg_err_errno(e, "fork");
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		if (pi[0] >= 0) {
			close(pi[0]);
			close(pi[1]);
		}
		return -1;
	}
	if (c->pid == 0) {
		devnull = open("/dev/null", O_RDONLY);
		if (dup2(in != NULL ? pi[0] : devnull, 0) < 0 ||
		    dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		vg_close_from(3, NULL, 0);
		/* The command as it would start: its own signal handling
		 * (vigil exec's SIGTERM kills the command's tree), nothing
		 * of the server's but the code. */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		for (argc = 0; argv[argc] != NULL; argc++)
			;
		argc = vg_cmd_main(argc, (char **)(uintptr_t)argv);
		fflush(stdout);
		fflush(stderr);
		_exit(argc);
	}
	close(po[1]);
	close(pe[1]);
	c->fd[0] = po[0];
	c->fd[1] = pe[0];
	(void)vg_fd_nonblock(po[0]);
	(void)vg_fd_nonblock(pe[0]);
	if (in != NULL) {
		close(pi[0]);
		(void)vg_write_all(pi[1], in, strlen(in));
		close(pi[1]);
	}
	c->started = vg_now();
	return 0;
}

/* Reads what fd k of c has; closes it at EOF. */
static void
call_read(struct vg_mcp_call *c, int k)
{
	char buf[65536];
	ssize_t n = read(c->fd[k], buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(c->fd[k]);
		c->fd[k] = -1;
		return;
	}
	vg_buf_add(k == 0 ? &c->out : &c->err, buf, (size_t)n);
}

/* Waits for c's child; its exit status as a shell tells it. */
static int
call_wait(struct vg_mcp_call *c)
{
	int st;

	while (waitpid(c->pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	c->pid = -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* Frees a call (its child already waited for). */
static void
call_free(struct vg_mcp_call *c)
{
	int k;

	if (c == NULL)
		return;
	for (k = 0; k < 2; k++)
		if (c->fd[k] >= 0)
			close(c->fd[k]);
	free(c->id);
	free(c->uri);
	free(c->progress);
	vg_json_free(c->doc);
	vg_buf_release(&c->out);
	vg_buf_release(&c->err);
	free(c);
}

/* A new call for request m (which it takes over). */
static struct vg_mcp_call *
call_new(enum call_kind kind, struct vg_rpc_msg *m)
{
	struct vg_mcp_call *c = vg_xcalloc(1, sizeof(*c));
	const struct vg_json_value *tok;

	c->kind = kind;
	c->id = m->id;
	c->doc = m->doc;
	m->id = NULL;
	m->doc = NULL;
	c->fd[0] = c->fd[1] = -1;
	c->pid = -1;
	tok = vg_json_get(vg_json_get(m->params, "_meta"), "progressToken");
	if (tok != NULL && (tok->type == VG_JSON_STRING ||
	    tok->type == VG_JSON_NUMBER)) {
		struct vg_buf b = VG_BUF_INIT;
		struct vg_json_writer w;

		vg_json_writer_init(&w, &b);
		vg_json_value_write(&w, tok);
		c->progress = vg_buf_detach(&b);
	}
	return c;
}

/* Runs argv to its end (for the server's own needs: the default
 * session, closing sessions); returns its exit status. */
static int
run_sync(char *const *argv, struct vg_buf *out, struct vg_buf *err)
{
	struct vg_mcp_call c;
	struct pollfd p[2];
	struct vg_err e;
	int k, st;

	memset(&c, 0, sizeof(c));
	vg_err_init(&e);
	if (spawn(&c, argv, NULL, &e) != 0) {
		vg_buf_adds(err, e.msg);
		return 127;
	}
	while (c.fd[0] >= 0 || c.fd[1] >= 0) {
		for (k = 0; k < 2; k++) {
			p[k].fd = c.fd[k];
			p[k].events = POLLIN;
			p[k].revents = 0;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (k = 0; k < 2; k++)
			if (c.fd[k] >= 0 && p[k].revents != 0)
				call_read(&c, k);
	}
	st = call_wait(&c);
	for (k = 0; k < 2; k++)
		if (c.fd[k] >= 0)
			close(c.fd[k]);
	vg_buf_add(out, c.out.data, c.out.len);
	vg_buf_add(err, c.err.data, c.err.len);
	vg_buf_release(&c.out);
	vg_buf_release(&c.err);
	return st;
}

/* Trims the final newlines of b (a child's stderr) for a message. */
static const char *
trimmed(struct vg_buf *b)
{
	while (b->len > 0 && (b->data[b->len - 1] == '\n' ||
	    b->data[b->len - 1] == '\r'))
		b->data[--b->len] = '\0';
	return vg_buf_str(b);
}

/* Opens the server's default session (once); NULL with e on failure. */
static const char *
default_session(struct server *s, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf out = VG_BUF_INIT, err = VG_BUF_INIT, id = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_json_doc *doc = NULL;
	int st, is_error;

	if (s->session != NULL)
		return s->session;
	if (vg_mcp_default_session_argv(s->conf, &argv, e) != 0)
		goto out;
	st = run_sync(argv.v, &out, &err);
	vg_json_writer_init(&w, &id);
	if (vg_mcp_tool_result(vg_mcp_tool_find("session_open"), NULL, &out,
	    &err, st, &w, &is_error) != 0) {
		vg_err_set(e, VG_EIO, "the default session did not open: %s",
		    err.len > 0 ? trimmed(&err) : "no id printed");
		goto out;
	}
	if (vg_json_parse(id.data, id.len, NULL, &doc, e) == 0) {
		s->session = vg_xstrdup(vg_json_get_str(vg_json_root(doc),
		    "session", NULL));
		vg_strv_push(&s->opened, s->session);
		fprintf(stderr, "vigil: mcp: opened session %s\n", s->session);
	}
out:
	vg_json_free(doc);
	vg_strv_release(&argv);
	vg_buf_release(&out);
	vg_buf_release(&err);
	vg_buf_release(&id);
	return s->session;
}

/* Sends a tool result that is an error with text msg. */
static void
send_tool_error(struct server *s, const char *id, const char *msg)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "content");
	vg_json_arr_begin(&w);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "type");
	vg_json_str(&w, "text");
	vg_json_key(&w, "text");
	vg_json_str(&w, msg);
	vg_json_obj_end(&w);
	vg_json_arr_end(&w);
	vg_json_key(&w, "isError");
	vg_json_bool(&w, 1);
	vg_json_obj_end(&w);
	send_result(s, id, vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Records the session a session_open result (JSON text) names as
 * opened here, by its id and by the name it was given. */
static void
note_opened(struct server *s, const struct vg_buf *sc,
    const struct vg_json_value *args)
{
	struct vg_json_doc *doc;
	struct vg_err e;
	const char *id, *name = vg_json_get_str(args, "name", NULL);

	vg_err_init(&e);
	if (vg_json_parse(sc->data, sc->len, NULL, &doc, &e) != 0)
		return;
	if ((id = vg_json_get_str(vg_json_root(doc), "session", NULL)) != NULL)
		vg_strv_push(&s->opened, id);
	if (id != NULL && name != NULL && name[0] != '\0')
		vg_strv_push(&s->names, name);
	vg_json_free(doc);
}

/* Sends the result of a finished tool call: the structured content and
 * the same JSON as text (for clients that read only content). */
static void
finish_tool(struct server *s, struct vg_mcp_call *c, int st)
{
	struct vg_buf sc = VG_BUF_INIT, b = VG_BUF_INIT;
	struct vg_json_writer w;
	int is_error = 1;

	vg_json_writer_init(&w, &sc);
	if (vg_mcp_tool_result(c->tool, c->args, &c->out, &c->err, st, &w,
	    &is_error) != 0) {
		vg_buf_printf(&b, "vigil %s: %s", c->tool->name,
		    c->err.len > 0 ? trimmed(&c->err) : "failed");
		if (c->err.len == 0)
			vg_buf_printf(&b, " (exit %d)", st);
		send_tool_error(s, c->id, vg_buf_str(&b));
		goto out;
	}
	if (strcmp(c->tool->name, "session_open") == 0)
		note_opened(s, &sc, c->args);
	/* The server's own session closed: the next command opens another. */
	if (strcmp(c->tool->name, "session_close") == 0 && s->session != NULL &&
	    strcmp(vg_json_get_str(c->args, "session", ""), s->session) == 0) {
		free(s->session);
		s->session = NULL;
	}
	vg_buf_adds(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
	vg_json_quote(&b, sc.data, sc.len);
	vg_buf_printf(&b, "}],\"structuredContent\":%s,\"isError\":%s}",
	    vg_buf_str(&sc), is_error ? "true" : "false");
	send_result(s, c->id, vg_buf_str(&b));
out:
	vg_buf_release(&sc);
	vg_buf_release(&b);
}

/* Sends the reply of a finished call and frees it. */
static void
finish(struct server *s, struct vg_mcp_call *c)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	int st = call_wait(c);

	if (c->cancelled)
		goto out;	/* a cancelled request gets no reply */
	switch (c->kind) {
	case CALL_TOOL:
		finish_tool(s, c, st);
		break;
	case CALL_LIST:
		vg_json_writer_init(&w, &b);
		vg_mcp_resources_from_status(&c->out, &w);
		send_result(s, c->id, vg_buf_str(&b));
		break;
	case CALL_READ:
		if (st != 0) {
			vg_buf_printf(&b, "resource '%s': %s", c->uri,
			    c->err.len > 0 ? trimmed(&c->err) : "not found");
			send_error(s, c->id, -32002, vg_buf_str(&b));
			break;
		}
		vg_json_writer_init(&w, &b);
		vg_json_obj_begin(&w);
		vg_json_key(&w, "contents");
		vg_json_arr_begin(&w);
		vg_json_obj_begin(&w);
		vg_json_key(&w, "uri");
		vg_json_str(&w, c->uri);
		vg_json_key(&w, "mimeType");
		vg_json_str(&w, c->mime);
		vg_json_key(&w, "text");
		vg_json_strn(&w, c->out.data != NULL ? c->out.data : "",
		    c->out.len);
		vg_json_obj_end(&w);
		vg_json_arr_end(&w);
		vg_json_obj_end(&w);
		send_result(s, c->id, vg_buf_str(&b));
		break;
	}
out:
	vg_buf_release(&b);
	call_free(c);
}

/* Starts call c running argv, or answers at once when it cannot. */
static void
start(struct server *s, struct vg_mcp_call *c, struct vg_strv *argv,
    const char *in)
{
	struct vg_err e;

	vg_err_init(&e);
	if (s->ncalls == MAX_CALLS) {
		send_error(s, c->id, VG_RPC_INTERNAL, "too many calls in "
		    "progress");
		call_free(c);
	} else if (spawn(c, argv->v, in, &e) != 0) {
		send_error(s, c->id, VG_RPC_INTERNAL, e.msg);
		call_free(c);
	} else {
		s->calls[s->ncalls++] = c;
	}
	vg_strv_release(argv);
}

int
vg_mcp_revision_served(const char *rev)
{
	int k;

	for (k = 0; revisions[k] != NULL; k++)
		if (strcmp(rev, revisions[k]) == 0)
			return 1;
	return 0;
}

/* The protocol revision to answer a client asking for want. */
static const char *
revision(const char *want)
{
	int k;

	for (k = 0; want != NULL && revisions[k] != NULL; k++)
		if (strcmp(want, revisions[k]) == 0)
			return revisions[k];
	return revisions[0];
}

/* initialize: the revision, what the server offers, who it is. */
static void
do_initialize(struct server *s, const struct vg_rpc_msg *m)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "protocolVersion");
	vg_json_str(&w, revision(vg_json_get_str(m->params, "protocolVersion",
	    NULL)));
	vg_json_key(&w, "capabilities");
	vg_json_obj_begin(&w);
	vg_json_key(&w, "tools");
	vg_json_obj_begin(&w);
	vg_json_key(&w, "listChanged");
	vg_json_bool(&w, 0);
	vg_json_obj_end(&w);
	vg_json_key(&w, "resources");
	vg_json_obj_begin(&w);
	vg_json_key(&w, "listChanged");
	vg_json_bool(&w, 0);
	vg_json_obj_end(&w);
	vg_json_obj_end(&w);
	vg_json_key(&w, "serverInfo");
	vg_json_obj_begin(&w);
	vg_json_key(&w, "name");
	vg_json_str(&w, "vigil");
	vg_json_key(&w, "version");
	vg_json_str(&w, VG_VERSION);
	vg_json_obj_end(&w);
	vg_json_key(&w, "instructions");
	vg_json_str(&w, "A sandboxed terminal: exec runs shell commands in a "
	    "session (opened for you on first use) after the policy gate; "
	    "a refused command comes back as an error with the reason and "
	    "the allow rule.  gate_check judges without running.");
	vg_json_obj_end(&w);
	send_result(s, m->id, vg_buf_str(&b));
	vg_buf_release(&b);
}

/* The session a call names in *session (NULL: none); -1 with e when it
 * is not a string. */
static int
arg_session(const struct vg_json_value *args, const char **session,
    struct vg_err *e)
{
	const struct vg_json_value *v = vg_json_get(args, "session");

	*session = NULL;
	if (v == NULL)
		return 0;
	if (v->type != VG_JSON_STRING || v->len == 0 || strlen(v->str) !=
	    v->len)
		return vg_err_set(e, VG_EINVAL, "argument 'session' must be a "
		    "session id or name");
	*session = v->str;
	return 0;
}

/* tools/call: checks the call, then starts its child. */
static void
do_tools_call(struct server *s, struct vg_rpc_msg *m)
{
	const struct vg_mcp_tool *t;
	const struct vg_json_value *args = vg_json_get(m->params, "arguments");
	const char *name = vg_json_get_str(m->params, "name", NULL);
	const char *session = NULL, *in;
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_mcp_call *c;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	if (name == NULL || (t = vg_mcp_tool_find(name)) == NULL) {
		vg_buf_printf(&b, "unknown tool '%s'", name != NULL ? name :
		    "(no name)");
		send_error(s, m->id, VG_RPC_INVALID_PARAMS, vg_buf_str(&b));
		goto out;
	}
	if (args != NULL && args->type != VG_JSON_OBJECT) {
		send_error(s, m->id, VG_RPC_INVALID_PARAMS, "'arguments' must "
		    "be an object");
		goto out;
	}
	/* The arguments are checked before a default session opens. */
	if (t->argv(s->conf, args, "", &argv, &e) != 0 || (t->in_session &&
	    arg_session(args, &session, &e) != 0)) {
		vg_buf_printf(&b, "tool '%s': %s", t->name, e.msg);
		send_error(s, m->id, VG_RPC_INVALID_PARAMS, vg_buf_str(&b));
		vg_strv_release(&argv);
		goto out;
	}
	/* Only sessions opened here: they gate under the server's mode. */
	if (session != NULL && !vg_strv_contains(&s->opened, session) &&
	    !vg_strv_contains(&s->names, session)) {
		vg_buf_printf(&b, "session '%s' was not opened by this server "
		    "(its commands gate under the server's mode %s): open one "
		    "with session_open, or leave 'session' out", session,
		    s->conf->mode);
		send_tool_error(s, m->id, vg_buf_str(&b));
		vg_strv_release(&argv);
		goto out;
	}
	if (t->in_session) {
		vg_strv_release(&argv);
		if (session == NULL && (session = default_session(s, &e)) ==
		    NULL) {
			send_tool_error(s, m->id, e.msg);
			goto out;
		}
		(void)t->argv(s->conf, args, session, &argv, &e);
	}
	in = t->takes_stdin ? vg_json_get_str(args, "stdin", NULL) : NULL;
	c = call_new(CALL_TOOL, m);
	c->tool = t;
	c->args = vg_json_get(vg_json_get(vg_json_root(c->doc), "params"),
	    "arguments");
	start(s, c, &argv, in);
out:
	vg_buf_release(&b);
}

/* resources/read: checks the uri, then starts its child. */
static void
do_resources_read(struct server *s, struct vg_rpc_msg *m)
{
	const char *uri = vg_json_get_str(m->params, "uri", NULL), *mime;
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_mcp_call *c;
	struct vg_err e;

	vg_err_init(&e);
	if (uri == NULL) {
		send_error(s, m->id, VG_RPC_INVALID_PARAMS, "'uri' (a string) "
		    "is required");
		return;
	}
	if (vg_mcp_resource_argv(s->conf, uri, &argv, &mime, &e) != 0) {
		send_error(s, m->id, -32002, e.msg);
		return;
	}
	c = call_new(CALL_READ, m);
	c->uri = vg_xstrdup(uri);
	c->mime = mime;
	start(s, c, &argv, NULL);
}

/* Stops call c's child (its command's tree goes with it). */
static void
call_stop(struct vg_mcp_call *c)
{
	if (c->pid > 0 && c->stopped == 0) {
		kill(c->pid, SIGTERM);
		c->stopped = vg_now();
	}
}

/* notifications/cancelled: stops the call with that request id. */
static void
do_cancelled(struct server *s, const struct vg_rpc_msg *m)
{
	const struct vg_json_value *rid = vg_json_get(m->params, "requestId");
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	int k;

	if (rid == NULL)
		return;
	vg_json_writer_init(&w, &b);
	vg_json_value_write(&w, rid);
	for (k = 0; k < s->ncalls; k++)
		if (strcmp(s->calls[k]->id, vg_buf_str(&b)) == 0) {
			s->calls[k]->cancelled = 1;
			call_stop(s->calls[k]);
			fprintf(stderr, "vigil: mcp: request %s cancelled\n",
			    s->calls[k]->id);
		}
	vg_buf_release(&b);
}

/* Acts on one message. */
static void
dispatch(struct server *s, struct vg_rpc_msg *m)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_strv argv = VG_STRV_INIT;

	if (m->kind == VG_RPC_RESPONSE)
		return;		/* we ask nothing of the client */
	if (m->kind == VG_RPC_NOTIFICATION) {
		if (strcmp(m->method, "notifications/cancelled") == 0)
			do_cancelled(s, m);
		return;		/* initialized and others: nothing */
	}
	vg_json_writer_init(&w, &b);
	if (strcmp(m->method, "initialize") == 0) {
		do_initialize(s, m);
	} else if (strcmp(m->method, "ping") == 0) {
		send_result(s, m->id, "{}");
	} else if (strcmp(m->method, "tools/list") == 0) {
		vg_mcp_tools_list(&w);
		send_result(s, m->id, vg_buf_str(&b));
	} else if (strcmp(m->method, "tools/call") == 0) {
		do_tools_call(s, m);
	} else if (strcmp(m->method, "resources/templates/list") == 0) {
		vg_mcp_resources_templates(&w);
		send_result(s, m->id, vg_buf_str(&b));
	} else if (strcmp(m->method, "resources/list") == 0) {
		vg_strv_push(&argv, s->conf->self);
		vg_strv_push(&argv, "status");
		vg_strv_push(&argv, "--json");
		start(s, call_new(CALL_LIST, m), &argv, NULL);
	} else if (strcmp(m->method, "resources/read") == 0) {
		do_resources_read(s, m);
	} else {
		vg_buf_printf(&b, "method '%s' not found", m->method);
		send_error(s, m->id, VG_RPC_NO_METHOD, vg_buf_str(&b));
	}
	vg_buf_release(&b);
}

/* Reads and acts on one line. */
static void
handle_line(struct server *s, const char *line, size_t len)
{
	struct vg_rpc_msg m;
	struct vg_err e;
	int code;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	vg_err_init(&e);
	if ((code = vg_rpc_read(line, len, &m, &e)) != 0) {
		if (m.kind != VG_RPC_NOTIFICATION || m.method == NULL)
			send_error(s, m.id, code, e.msg);
	} else {
		dispatch(s, &m);
	}
	vg_rpc_msg_release(&m);
}

/* Reads what the client sent; 0 at its end. */
static int
read_input(struct server *s)
{
	char buf[65536];
	ssize_t n = read(s->in, buf, sizeof(buf));
	char *nl;
	size_t off = 0;

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	vg_buf_add(&s->inbuf, buf, (size_t)n);
	while (off < s->inbuf.len && (nl = memchr(s->inbuf.data + off, '\n',
	    s->inbuf.len - off)) != NULL) {
		if (!s->skipping)
			handle_line(s, s->inbuf.data + off,
			    (size_t)(nl - (s->inbuf.data + off)));
		s->skipping = 0;
		off = (size_t)(nl - s->inbuf.data) + 1;
	}
	memmove(s->inbuf.data, s->inbuf.data + off, s->inbuf.len - off);
	s->inbuf.len -= off;
	if (s->inbuf.len > VG_RPC_MAX_MESSAGE) {
		send_error(s, NULL, VG_RPC_PARSE_ERROR, "message over the "
		    "limit of 4 MiB");
		vg_buf_reset(&s->inbuf);
		s->skipping = 1;
	}
	return 1;
}

/* Sends the progress notifications due now. */
static void
progress(struct server *s, double now)
{
	struct vg_buf b = VG_BUF_INIT, p = VG_BUF_INIT;
	struct vg_mcp_call *c;
	int k, secs;

	for (k = 0; k < s->ncalls; k++) {
		c = s->calls[k];
		secs = (int)(now - c->started);
		if (c->progress == NULL || c->cancelled || secs <= c->ticks)
			continue;
		c->ticks = secs;
		vg_buf_reset(&p);
		vg_buf_printf(&p, "{\"progressToken\":%s,\"progress\":%d,"
		    "\"message\":\"running for %ds\"}", c->progress, secs,
		    secs);
		vg_rpc_write_notification(&b, "notifications/progress",
		    vg_buf_str(&p));
	}
	send_buf(s, &b);
	vg_buf_release(&b);
	vg_buf_release(&p);
}

/* Closes the sessions this server opened. */
static void
close_opened(struct server *s)
{
	struct vg_buf out = VG_BUF_INIT, err = VG_BUF_INIT;
	size_t i;

	for (i = 0; i < s->opened.n; i++) {
		char *argv[] = { (char *)(uintptr_t)s->conf->self,
		    (char *)(uintptr_t)"session", (char *)(uintptr_t)"stop",
		    s->opened.v[i], NULL };

		vg_buf_reset(&err);
		if (run_sync(argv, &out, &err) != 0 && err.len > 0)
			fprintf(stderr, "vigil: mcp: closing session %s: %s\n",
			    s->opened.v[i], trimmed(&err));
	}
	vg_buf_release(&out);
	vg_buf_release(&err);
}

/* One turn of the loop: waits for input or a child, acts on it. */
static void
turn(struct server *s, int reading)
{
	struct pollfd p[1 + 2 * MAX_CALLS];
	struct vg_mcp_call *c;
	int n = 0, k, j, alive, polled = s->ncalls;
	double now;

	if (reading) {
		p[n].fd = s->in;
		p[n++].events = POLLIN;
	}
	for (k = 0; k < s->ncalls; k++)
		for (j = 0; j < 2; j++) {
			p[n].fd = s->calls[k]->fd[j];
			p[n++].events = POLLIN;
		}
	if (poll(p, (nfds_t)n, s->ncalls > 0 ? 250 : -1) < 0 &&
	    errno != EINTR)
		mcp_stop = 1;
	n = 0;
	if (reading && (p[n++].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    !read_input(s))
		mcp_stop = 1;
	/* Only the calls polled: a message read may have started more. */
	for (k = 0; k < polled; k++)
		for (j = 0; j < 2; j++, n++)
			if (s->calls[k]->fd[j] >= 0 && (p[n].revents &
			    (POLLIN | POLLHUP | POLLERR)))
				call_read(s->calls[k], j);
	now = vg_now();
	for (k = 0, alive = 0; k < s->ncalls; k++) {
		c = s->calls[k];
		if (mcp_stop)
			call_stop(c);
		if (c->stopped > 0 && now - c->stopped > STOP_GRACE)
			kill(c->pid, SIGKILL);
		if (c->fd[0] < 0 && c->fd[1] < 0)
			finish(s, c);
		else
			s->calls[alive++] = c;
	}
	s->ncalls = alive;
	progress(s, now);
}

int
vg_mcp_serve(const struct vg_mcp_conf *conf, int in, int out)
{
	struct server s;
	struct sigaction sa;

	memset(&s, 0, sizeof(s));
	s.conf = conf;
	s.in = in;
	s.out = out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!mcp_stop)
		turn(&s, 1);
	/* The client is gone: stop what runs for it, then close. */
	while (s.ncalls > 0)
		turn(&s, 0);
	close_opened(&s);
	free(s.session);
	vg_strv_release(&s.opened);
	vg_strv_release(&s.names);
	vg_buf_release(&s.inbuf);
	return 0;
}

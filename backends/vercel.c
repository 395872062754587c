/*
 * vercel.c - the vercel backend: each attempt in a new Vercel Sandbox,
 * through the Sandbox REST API as the @vercel/sandbox SDK speaks it
 * (vercel/sandbox at 81d725b7: packages/vercel-sandbox/src/api-client/
 * api-client.ts for paths and bodies, validators.ts for replies,
 * base-client.ts for auth and error bodies, with-retry.ts for retries).
 *
 *   POST   /v3/sandboxes                         create: {sandbox, session}
 *   POST   /v2/sandboxes/sessions/S/cmd          {"command", "args", "env",
 *            "cwd", "sudo", "wait": true, "logs": true}: an
 *            application/x-ndjson stream of {"command"} (started), log
 *            lines {"stream", "data"}, then {"command"} with exitCode
 *   POST   /v2/sandboxes/sessions/S/cmd/C/kill   {"signal": 15 | 9}
 *   GET    /v2/sandboxes/sessions/S/cmd/C?wait=true
 *   GET    /v2/sandboxes/sessions/S/cmd/C/logs   the log again (ndjson)
 *   GET    /v2/sandboxes/NAME?projectId=P        currentSessionId, status
 *   POST   /v2/sandboxes/sessions/S/stop
 *   DELETE /v2/sandboxes/NAME?projectId=P
 *   GET    /v2/sandboxes?project=P&tags=K:V      reap
 *   POST   /v2/sandboxes/sessions/S/fs/read      {"path", "cwd"}: the
 *            file's bytes (application/octet-stream), 404 when missing;
 *            outputs, listed first by a find in the sandbox as the SDK's
 *            filesystem readdir does (the API has no listing)
 *
 * Every request carries "?teamId=T" and "Authorization: Bearer TOKEN"
 * (an access token: $VERCEL_TOKEN, $VERCEL_TEAM_ID, $VERCEL_PROJECT_ID,
 * the three credentials the SDK's README names).  Base URL
 * https://vercel.com/api (vercel.endpoint or $VIGIL_VERCEL_API_URL
 * override it; the SDK has no variable of its own for it).  Errors
 * come back as {"error": {"code", "message"}}.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cloud.h"
#include "common/log.h"

/* A log line of the stream; the API sends output in chunks. */
#define VERCEL_LINE_MAX		(16u << 20)
/* After the command's own time: its kill grace and a margin before the
 * sandbox itself stops. */
#define VERCEL_TIMEOUT_MARGIN	60.0

/* ------------------------------------------------------------------ */
/* Pure parts                                                          */
/* ------------------------------------------------------------------ */

/* Parses one line of a command or log stream; see cloud.h. */
int
vg_vercel_event_parse(const char *line, size_t n, struct vg_vercel_event *ev,
    struct vg_json_doc **docp, struct vg_err *e)
{
	struct vg_json_limits lim = { .max_bytes = VERCEL_LINE_MAX };
	const struct vg_json_value *root, *cmd, *ec, *data;
	const char *stream;

	memset(ev, 0, sizeof(*ev));
	ev->exit_code = -1;
	*docp = NULL;
	if (vg_json_parse(line, n, &lim, docp, e) != 0)
		return vg_err_prefix(e, "vercel: command stream: ");
	root = vg_json_root(*docp);
	if (root->type != VG_JSON_OBJECT)
		return vg_err_set(e, VG_EPARSE, "vercel: command stream: line "
		    "is not an object");
	if ((cmd = vg_json_get(root, "command")) != NULL) {
		if (cmd->type != VG_JSON_OBJECT ||
		    vg_json_get_str(cmd, "id", NULL) == NULL)
			return vg_err_set(e, VG_EPARSE, "vercel: command "
			    "stream: \"command\" has no \"id\"");
		ev->kind = VG_VERCEL_COMMAND;
		snprintf(ev->id, sizeof(ev->id), "%s",
		    vg_json_get_str(cmd, "id", ""));
		ec = vg_json_get(cmd, "exitCode");
		if (ec != NULL && ec->type == VG_JSON_NUMBER)
			ev->exit_code = ec->num >= 0 && ec->num <= 255 ?
			    (long)ec->num : 255;
		else if (ec != NULL && ec->type != VG_JSON_NULL)
			return vg_err_set(e, VG_EPARSE, "vercel: command "
			    "stream: \"exitCode\" is neither a number nor "
			    "null");
		return 0;
	}
	stream = vg_json_get_str(root, "stream", NULL);
	data = vg_json_get(root, "data");
	if (stream == NULL || data == NULL)
		return vg_err_set(e, VG_EPARSE, "vercel: command stream: line "
		    "has neither \"command\" nor \"stream\" and \"data\"");
	if (strcmp(stream, "error") == 0) {
		ev->kind = VG_VERCEL_ERROR;
		snprintf(ev->message, sizeof(ev->message), "%s: %s",
		    vg_json_get_str(data, "code", "error"),
		    vg_json_get_str(data, "message", ""));
		return 0;
	}
	if (data->type != VG_JSON_STRING || (strcmp(stream, "stdout") != 0 &&
	    strcmp(stream, "stderr") != 0))
		return vg_err_set(e, VG_EPARSE, "vercel: command stream: "
		    "unknown stream '%s' or \"data\" not a string", stream);
	ev->kind = VG_VERCEL_LOG;
	ev->stream = stream[3] == 'o' ? 1 : 2;
	ev->data = data->str;
	ev->len = data->len;
	return 0;
}

/* Body of POST /v3/sandboxes; see cloud.h. */
void
vg_vercel_create_body(const struct vg_attempt *a,
    const struct vg_cloud_conf *conf, const char *project,
    struct vg_buf *out)
{
	const struct vg_manifest *m = a->m;
	struct vg_json_writer w;

	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "projectId");
	vg_json_str(&w, project);
	vg_json_key(&w, "ports");
	vg_json_arr_begin(&w);
	vg_json_arr_end(&w);
	if (conf->snapshot != NULL && *conf->snapshot) {
		vg_json_key(&w, "source");
		vg_json_obj_begin(&w);
		vg_json_key(&w, "type");
		vg_json_str(&w, "snapshot");
		vg_json_key(&w, "snapshotId");
		vg_json_str(&w, conf->snapshot);
		vg_json_obj_end(&w);
	} else if (m->image != NULL && *m->image) {
		vg_json_key(&w, "image");
		vg_json_str(&w, m->image);
	}
	if (a->timeout > 0) {
		/* Milliseconds; without it the sandbox stops after the
		 * API's default (5 minutes). */
		vg_json_key(&w, "timeout");
		vg_json_int(&w, (long long)((a->timeout + a->kill_grace +
		    VERCEL_TIMEOUT_MARGIN) * 1000));
	}
	if (a->res.cpus > 0) {
		vg_json_key(&w, "resources");
		vg_json_obj_begin(&w);
		vg_json_key(&w, "vcpus");
		vg_json_int(&w, a->res.cpus);
		vg_json_obj_end(&w);
	}
	if (conf->region != NULL && *conf->region) {
		vg_json_key(&w, "region");
		vg_json_str(&w, conf->region);
	}
	vg_json_key(&w, "tags");
	vg_json_obj_begin(&w);
	vg_cloud_labels(a, &w);
	vg_json_obj_end(&w);
	vg_json_obj_end(&w);
}

/* Body of POST .../cmd; see cloud.h. */
void
vg_vercel_cmd_body(const struct vg_attempt *a, struct vg_buf *out)
{
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	struct vg_json_writer w;
	const char *eq;
	char *key;
	size_t i;

	vg_attempt_argv(a, &argv);
	vg_task_env(a, VG_ENV_IMAGE, &env);
	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "command");
	vg_json_str(&w, argv.n > 0 ? argv.v[0] : "/bin/sh");
	vg_json_key(&w, "args");
	vg_json_arr_begin(&w);
	for (i = 1; i < argv.n; i++)
		vg_json_str(&w, argv.v[i]);
	vg_json_arr_end(&w);
	if (a->m->workdir != NULL) {
		vg_json_key(&w, "cwd");
		vg_json_str(&w, a->m->workdir);
	}
	vg_json_key(&w, "env");
	vg_json_obj_begin(&w);
	for (i = 0; i < env.n; i++) {
		eq = strchr(env.v[i], '=');
		key = vg_xstrndup(env.v[i], (size_t)(eq - env.v[i]));
		vg_json_key(&w, key);
		vg_json_str(&w, eq + 1);
		free(key);
	}
	vg_json_obj_end(&w);
	vg_json_key(&w, "sudo");
	vg_json_bool(&w, 0);
	vg_json_key(&w, "wait");
	vg_json_bool(&w, 1);
	vg_json_key(&w, "logs");
	vg_json_bool(&w, 1);
	vg_json_obj_end(&w);
	vg_strv_release(&argv);
	vg_strv_release(&env);
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

/* path + "?teamId=T" + ("&" + query); caller frees. */
static char *
vpath(const struct vg_cloud *c, const char *path, const char *query)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_adds(&b, path);
	vg_buf_adds(&b, "?teamId=");
	vg_http_escape(&b, c->team);
	if (query != NULL) {
		vg_buf_addc(&b, '&');
		vg_buf_adds(&b, query);
	}
	return vg_buf_detach(&b);
}

/* "projectId=P" escaped; caller frees. */
static char *
project_query(const struct vg_cloud *c, const char *key)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_printf(&b, "%s=", key);
	vg_http_escape(&b, c->project);
	return vg_buf_detach(&b);
}

/* POST /v3/sandboxes; the session it returns runs the command. */
static int
vercel_create(struct vg_cloud_task *t, struct vg_err *e)
{
	struct vg_buf body = VG_BUF_INIT;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root;
	struct vg_cloud_req rq = {
		.method = "POST",
		.body = &body,
		.what = "creating the sandbox",
		.timeout = VG_CLOUD_CREATE_TIMEOUT,
	};
	const char *name, *sid;
	char *path = vpath(&t->c, "/v3/sandboxes", NULL);
	int r;

	rq.path = path;
	vg_vercel_create_body(t->a, t->c.conf, t->c.project, &body);
	if ((r = vg_cloud_request(&t->c, &rq, e)) != 0 ||
	    (r = vg_cloud_json(&t->c, &doc, rq.what, e)) != 0)
		goto out;
	root = vg_json_root(doc);
	name = vg_json_get_str(vg_json_get(root, "sandbox"), "name", NULL);
	sid = vg_json_get_str(vg_json_get(root, "session"), "id", NULL);
	if (name != NULL && *name)
		t->sandbox = vg_xstrdup(name);
	if (name == NULL || *name == '\0' || sid == NULL || *sid == '\0' ||
	    strchr(sid, '/') != NULL) {
		r = vg_err_set(e, VG_EBACKEND, "vercel: creating the sandbox: "
		    "reply lacks \"sandbox.name\" or \"session.id\"");
		goto out;
	}
	t->session = vg_xstrdup(sid);
out:
	vg_json_free(doc);
	vg_buf_release(&body);
	free(path);
	return r;
}

/* State of a command stream being read. */
struct cmd_stream {
	struct vg_cloud_task	*t;
	long			 code;		/* -1 until finished */
	int			 checked;	/* content type looked at */
	struct vg_err		 err;		/* first problem */
};

/* One line of a command or log stream. */
static int
stream_line(void *arg, const char *line, size_t n)
{
	struct cmd_stream *cs = arg;
	struct vg_vercel_event ev;
	struct vg_json_doc *doc = NULL;
	char ct[128];
	int r = 0;

	if (!cs->checked) {
		cs->checked = 1;
		if (!vg_http_resp_header(&cs->t->c.resp, "Content-Type", ct,
		    sizeof(ct)) || strcmp(ct, "application/x-ndjson") != 0)
			return vg_err_set(&cs->err, VG_EPARSE, "vercel: "
			    "expected a stream of command data "
			    "(application/x-ndjson), got '%s'", ct);
	}
	if (n == 0)
		return 0;
	if ((r = vg_vercel_event_parse(line, n, &ev, &doc, &cs->err)) != 0)
		goto out;
	switch (ev.kind) {
	case VG_VERCEL_COMMAND:
		if (cs->t->cmd == NULL && ev.id[0] != '\0' &&
		    strchr(ev.id, '/') == NULL) {
			cs->t->cmd = vg_xstrdup(ev.id);
			/* For a later reattach. */
			vg_cloud_record(cs->t);
		}
		if (ev.exit_code >= 0)
			cs->code = ev.exit_code;
		break;
	case VG_VERCEL_LOG:
		if ((r = vg_cloud_out_write(&cs->t->out, ev.stream, ev.data,
		    ev.len)) != 0)
			vg_err_set(&cs->err, r, "vercel: cannot write the "
			    "task's output");
		break;
	default:
		r = vg_err_set(&cs->err, VG_EBACKEND, "vercel: command "
		    "stream: %s", ev.message);
	}
out:
	vg_json_free(doc);
	return r;
}

/*
 * Reads an ndjson stream (a command, or its logs) into t->out; *code
 * gets the exit code when the stream reports it.  timeout < 0: none.
 */
static int
read_stream(struct vg_cloud_task *t, const char *method, const char *path,
    const struct vg_buf *body, double timeout, const char *what,
    long *code, struct vg_err *e)
{
	struct cmd_stream cs = { .t = t, .code = -1 };
	struct vg_cloud_lines l;
	struct vg_cloud_req rq = {
		.method = method,
		.path = path,
		.body = body,
		.what = what,
		.timeout = timeout,
		.sink = vg_cloud_lines_feed,
		.sink_arg = &l,
		.once = 1,
	};
	int r;

	vg_err_init(&cs.err);
	vg_cloud_lines_init(&l, VERCEL_LINE_MAX, stream_line, &cs);
	r = vg_cloud_request(&t->c, &rq, e);
	if (r == 0)
		r = vg_cloud_lines_end(&l);
	if (cs.err.rc != 0 && (r == 0 || r == VG_ECANCELED ||
	    r == cs.err.rc))
		r = vg_err_set(e, cs.err.rc, "%s", cs.err.msg);
	else if (l.rc == VG_ELIMIT)
		r = vg_err_set(e, VG_ELIMIT, "vercel: %s: a line of the stream "
		    "is longer than %u bytes", what, VERCEL_LINE_MAX);
	*code = cs.code;
	vg_cloud_lines_release(&l);
	return r;
}

/* Picks a command stream that dropped up again this many times, with
 * backoff, before the attempt ends BACKEND_ERROR (transient). */
#define VERCEL_STREAM_TRIES	5

/*
 * After the command stream dropped: GET .../cmd/C/logs follows the log
 * from its start to the command's end (what the files hold already is
 * skipped), then GET .../cmd/C gives the exit code.
 */
static int
resume_stream(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *ec;
	char *base = vg_xasprintf("/v2/sandboxes/sessions/%s/cmd/%s",
	    t->session, t->cmd), *logs = vg_xasprintf("%s/logs", base),
	    *path = vpath(&t->c, logs, NULL);
	int r;

	vg_cloud_out_rewind(&t->out);
	r = read_stream(t, "GET", path, NULL, deadline > 0 ?
	    vg_time_left(deadline, 0.001) : -1, "reading the command's "
	    "output again", code, e);
	free(path);
	if (r == 0 && *code < 0) {
		path = vpath(&t->c, base, "wait=true");
		r = vg_cloud_call(&t->c, "GET", path, NULL, NULL,
		    "waiting for the command", e);
		free(path);
		if (r == 0 && (r = vg_cloud_json(&t->c, &doc, "command status",
		    e)) == 0) {
			ec = vg_json_get(vg_json_get(vg_json_root(doc),
			    "command"), "exitCode");
			if (ec != NULL && ec->type == VG_JSON_NUMBER)
				*code = (long)ec->num;
			else
				r = vg_err_set(e, VG_EAGAIN, "vercel: the "
				    "command has no exit code yet");
			vg_json_free(doc);
		}
	}
	free(logs);
	free(base);
	return r;
}

/* Runs the command and streams its output until it exits; a dropped
 * stream (connection reset, cut body) is picked up again from the log. */
static int
vercel_wait(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	struct vg_buf body = VG_BUF_INIT;
	char *base = vg_xasprintf("/v2/sandboxes/sessions/%s/cmd",
	    t->session), *path = vpath(&t->c, base, NULL);
	int r, n;

	vg_vercel_cmd_body(t->a, &body);
	/* Attached: the command runs already; follow its log. */
	r = t->attached ? resume_stream(t, deadline, code, e) :
	    read_stream(t, "POST", path, &body, deadline > 0 ?
	    vg_time_left(deadline, 0.001) : -1, "running the command", code,
	    e);
	for (n = 1; (r == VG_EIO || r == VG_EAGAIN) && t->cmd != NULL &&
	    n < VERCEL_STREAM_TRIES; n++) {
		vg_warn("vercel: command stream dropped (%s); reading it "
		    "again", e->msg);
		if (vg_cloud_sleep(t->c.stop, vg_cloud_backoff(n, 0,
		    0.5)) != 0)
			return vg_err_set(e, VG_ECANCELED, "vercel: "
			    "interrupted");
		vg_err_init(e);
		r = resume_stream(t, deadline, code, e);
	}
	if (r == 0 && *code < 0)
		r = vg_err_set(e, VG_EAGAIN, "vercel: the command stream "
		    "ended before the command finished");
	vg_buf_release(&body);
	free(base);
	free(path);
	return r;
}

/* Takes over the recorded command (see cloud.h): its session must
 * still know it (GET .../cmd/C); VG_ENOENT otherwise. */
static int
vercel_resume(struct vg_cloud_task *t, struct vg_err *e)
{
	static const long ok[] = { 404, 410, 0 };
	char *base, *path;
	int r;

	if (t->session == NULL)
		return vg_err_set(e, VG_ENOENT, "vercel: no session recorded");
	base = vg_xasprintf("/v2/sandboxes/sessions/%s/cmd/%s", t->session,
	    t->cmd);
	path = vpath(&t->c, base, NULL);
	r = vg_cloud_call(&t->c, "GET", path, NULL, ok,
	    "looking up the command", e);
	if (r == 0 && t->c.resp.status >= 400)
		r = vg_err_set(e, VG_ENOENT, "vercel: session %s no longer "
		    "knows command %s", t->session, t->cmd);
	free(base);
	free(path);
	return r;
}

/* POST .../cmd/C/kill with signal sig. */
static void
kill_command(struct vg_cloud_task *t, int sig)
{
	struct vg_buf body = VG_BUF_INIT;
	struct vg_err e;
	char *base = vg_xasprintf("/v2/sandboxes/sessions/%s/cmd/%s/kill",
	    t->session, t->cmd), *path = vpath(&t->c, base, NULL);

	vg_buf_printf(&body, "{\"signal\":%d}", sig);
	vg_err_init(&e);
	(void)vg_cloud_call(&t->c, "POST", path, &body, NULL,
	    "signalling the command", &e);
	vg_buf_release(&body);
	free(base);
	free(path);
}

/* SIGTERM, wait up to grace, SIGKILL; then the rest of the output. */
static void
vercel_kill(struct vg_cloud_task *t, double grace, int *sig)
{
	struct vg_cloud_req rq = {
		.method = "GET",
		.what = "waiting for the command",
		.timeout = grace > 0 ? grace : 0.001,
		.once = 1,
	};
	struct vg_err e;
	char *base, *path;
	long code;

	*sig = SIGTERM;
	if (t->cmd == NULL)
		return;	/* not started: stopping the sandbox is enough */
	kill_command(t, SIGTERM);
	base = vg_xasprintf("/v2/sandboxes/sessions/%s/cmd/%s", t->session,
	    t->cmd);
	path = vpath(&t->c, base, "wait=true");
	rq.path = path;
	vg_err_init(&e);
	if (vg_cloud_request(&t->c, &rq, &e) != 0) {
		kill_command(t, SIGKILL);
		*sig = SIGKILL;
	}
	free(path);
	/* The stream was cut: read the whole log again, keep what is new. */
	path = vg_xasprintf("%s/logs", base);
	free(base);
	base = vpath(&t->c, path, NULL);
	vg_cloud_out_rewind(&t->out);
	(void)read_stream(t, "GET", base, NULL, VG_CLOUD_CALL_TIMEOUT,
	    "reading the command's output", &code, &e);
	free(base);
	free(path);
}

/* Stops the sandbox's session when it runs, then deletes the sandbox. */
static int
vercel_destroy(struct vg_cloud *c, const char *name, struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	struct vg_buf enc = VG_BUF_INIT;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *sb;
	char *q = project_query(c, "projectId"), *base, *path, *sid = NULL;
	const char *st;
	int r;

	vg_buf_adds(&enc, "/v2/sandboxes/");
	vg_http_escape(&enc, name);
	path = vpath(c, vg_buf_str(&enc), q);
	if ((r = vg_cloud_call(c, "GET", path, NULL, ok404,
	    "looking up the sandbox", e)) != 0 || c->resp.status == 404)
		goto out;
	if ((r = vg_cloud_json(c, &doc, "looking up the sandbox", e)) != 0)
		goto out;
	sb = vg_json_get(vg_json_root(doc), "sandbox");
	st = vg_json_get_str(sb, "status", "");
	if (vg_json_get_str(sb, "currentSessionId", NULL) != NULL &&
	    (strcmp(st, "running") == 0 || strcmp(st, "pending") == 0))
		sid = vg_xstrdup(vg_json_get_str(sb, "currentSessionId", ""));
	vg_json_free(doc);
	doc = NULL;
	if (sid != NULL && strchr(sid, '/') == NULL) {
		base = vg_xasprintf("/v2/sandboxes/sessions/%s/stop", sid);
		free(path);
		path = vpath(c, base, NULL);
		free(base);
		if ((r = vg_cloud_call(c, "POST", path, NULL, ok404,
		    "stopping the sandbox", e)) != 0)
			goto out;
	}
	free(path);
	path = vpath(c, vg_buf_str(&enc), q);
	r = vg_cloud_call(c, "DELETE", path, NULL, ok404,
	    "deleting the sandbox", e);
out:
	vg_json_free(doc);
	vg_buf_release(&enc);
	free(q);
	free(path);
	free(sid);
	return r;
}

/* Appends "&tags=KEY:VALUE". */
static void
tag_filter(struct vg_buf *b, const char *key, const char *value)
{
	char *kv = vg_xasprintf("%s:%s", key, value);

	vg_buf_adds(b, "&tags=");
	vg_http_escape(b, kv);
	free(kv);
}

/* GET /v2/sandboxes?project=P&tags=K:V (sandboxes, pagination.next). */
static char *
vercel_list_path(struct vg_cloud *c, const char *run_id, const char *cursor)
{
	struct vg_buf q = VG_BUF_INIT;
	char *pq = project_query(c, "project"), *path;

	vg_buf_printf(&q, "%s&limit=100", pq);
	tag_filter(&q, VG_CLOUD_LABEL, "1");
	if (run_id != NULL)
		tag_filter(&q, VG_CLOUD_LABEL_RUN, run_id);
	if (cursor != NULL) {
		vg_buf_adds(&q, "&cursor=");
		vg_http_escape(&q, cursor);
	}
	path = vpath(c, "/v2/sandboxes", vg_buf_str(&q));
	vg_buf_release(&q);
	free(pq);
	return path;
}

/* One authenticated request for `vigil doctor`. */
static int
vercel_ping(struct vg_cloud *c, struct vg_err *e)
{
	char *q = project_query(c, "project"), *lq, *path;
	int r;

	lq = vg_xasprintf("%s&limit=1", q);
	path = vpath(c, "/v2/sandboxes", lq);
	r = vg_cloud_call(c, "GET", path, NULL, NULL, "listing sandboxes", e);
	free(q);
	free(lq);
	free(path);
	return r;
}

/* POST .../sessions/S/fs/read {"path"}: the file's bytes, which the
 * SDK takes only as application/octet-stream. */
static int
vercel_get_file(struct vg_cloud_task *t, const char *path, int fd,
    unsigned long long max, struct vg_err *e)
{
	struct vg_buf body = VG_BUF_INIT;
	struct vg_json_writer w;
	char *base = vg_xasprintf("/v2/sandboxes/sessions/%s/fs/read",
	    t->session), *rp = vpath(&t->c, base, NULL), ct[128];
	int r;

	vg_json_writer_init(&w, &body);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "path");
	vg_json_str(&w, path);
	vg_json_obj_end(&w);
	r = vg_cloud_get_file(&t->c, "POST", rp, &body, fd, max, e);
	if (r == 0 && (!vg_http_resp_header(&t->c.resp, "Content-Type", ct,
	    sizeof(ct)) || strstr(ct, "application/octet-stream") == NULL))
		r = vg_err_set(e, VG_EBACKEND, "vercel: reading '%s': the "
		    "reply is not application/octet-stream", path);
	vg_buf_release(&body);
	free(base);
	free(rp);
	return r;
}

/* The vercel: section. */
static const struct vg_msection vercel_msection = {
	.key = "vercel",
	.schema = &vg_cloud_schema,
	.size = sizeof(struct vg_cloud_conf),
	.help = "Vercel sandbox",
};

static const struct vg_cloud_ops vercel_cloud = {
	.name = "vercel",
	.token_env = "VERCEL_TOKEN",
	.endpoint_env = "VIGIL_VERCEL_API_URL",
	.endpoint = "https://vercel.com/api",
	.team_env = "VERCEL_TEAM_ID",
	.project_env = "VERCEL_PROJECT_ID",
	.section = &vercel_msection,
	.create = vercel_create,
	.wait = vercel_wait,
	.kill = vercel_kill,
	.reattach = vercel_resume,
	.destroy = vercel_destroy,
	.list_path = vercel_list_path,
	.list_items = "sandboxes",
	.list_id = "name",
	.list_labels = "tags",
	.list_next_in = "pagination",
	.list_next = "next",
	.ping = vercel_ping,
	.get_file = vercel_get_file,
};

/* ---- the backend: each op is the shared cloud implementation
 * (cloud.c) given vercel's table above ---- */

/* backend op: run; the attempt in a new sandbox, in the monitor. */
static int
vercel_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	return vg_cloud_run(&vercel_cloud, a, r, e);
}

/* backend op: reap */
static int
vercel_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	return vg_cloud_reap(&vercel_cloud, m, run_id, task, report, e);
}

/* backend op: reattach */
static int
vercel_reattach(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	return vg_cloud_reattach(&vercel_cloud, a, r, e);
}

/* backend op: probe */
static void
vercel_probe(struct vg_buf *out)
{
	vg_cloud_probe(&vercel_cloud, out);
}

/* plugin op: validate */
static int
vercel_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	return vg_cloud_validate(&vercel_cloud, m, d);
}

/* plugin op: host_check */
static void
vercel_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	vg_cloud_host_check(&vercel_cloud, m, why);
}

/* backend op: session_open */
static int
vercel_session_open(struct vg_session *s, struct vg_err *e)
{
	return vg_cloud_session_open(&vercel_cloud, s, e);
}

/* backend op: session_exec */
static int
vercel_session_exec(const struct vg_session *s, const struct vg_session_cmd *c,
    struct vg_result *r, struct vg_err *e)
{
	return vg_cloud_session_exec(&vercel_cloud, s, c, r, e);
}

/* backend op: session_close */
static int
vercel_session_close(const struct vg_session *s, struct vg_err *e)
{
	return vg_cloud_session_close(&vercel_cloud, s, e);
}

/* backend op: timeout_slack */
static double
vercel_timeout_slack(const struct vg_attempt *a)
{
	return vg_cloud_timeout_slack(&vercel_cloud, a);
}

static const struct vg_msection *const vercel_sections[] = {
	&vercel_msection, NULL
};

const struct vg_backend_ops vg_backend_vercel = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "vercel",
		.help = "a vercel sandbox",
		.sections = vercel_sections,
		.validate = vercel_validate,
		.host_check = vercel_host_check,
	},
	.probe = vercel_probe,
	.run = vercel_run,
	.reap = vercel_reap,
	.pool = vg_cloud_pool,
	.session_open = vercel_session_open,
	.session_exec = vercel_session_exec,
	.session_close = vercel_session_close,
	.reattach = vercel_reattach,
	.timeout_slack = vercel_timeout_slack,
};

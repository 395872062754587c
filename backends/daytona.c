/*
 * daytona.c - the daytona backend: each attempt in a new Daytona sandbox,
 * through Daytona's REST API (daytonaio/daytona at b5a5d9e78: the API's
 * apps/api/src/sandbox/controllers/sandbox.controller.ts and dto/, the
 * toolbox daemon's OpenAPI apps/daemon/pkg/toolbox/docs/swagger.json;
 * the TypeScript SDK libs/sdk-typescript/src/{Daytona,Sandbox}.ts for
 * how clients reach the toolbox).
 *
 *   POST   {api}/sandbox                      create (CreateSandbox)
 *   GET    {api}/sandbox/{id}                 until state "started"
 *   POST   {toolbox}/process/session          {"sessionId"}
 *   POST   {toolbox}/process/session/S/exec   {"command", "runAsync"}
 *   GET    {toolbox}/process/session/S/command/C         exitCode
 *   GET    {toolbox}/process/session/S/command/C/logs    output so far
 *   DELETE {toolbox}/process/session/S        SIGTERM, grace, SIGKILL
 *   DELETE {api}/sandbox/{id}
 *   GET    {api}/sandbox?labels={json}        reap
 *
 * {api} is https://app.daytona.io/api ($DAYTONA_API_URL), {toolbox} the
 * sandbox's toolboxProxyUrl + "/" + id, both with "Authorization: Bearer
 * $DAYTONA_API_KEY".  Session commands take one string, so the attempt
 * becomes a small sh script (cloud.c).  The logs endpoint streams only
 * over WebSocket; plain GETs return the whole log so far, which is polled
 * with a growing interval and demultiplexed on the fly (the markers
 * below), keeping only what is new: memory stays flat whatever the
 * output size.  Asking with "X-Daytona-Split-Output: true" and no SDK
 * version gets that raw log (daemon pkg/session/common.go).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cloud.h"

#define DAYTONA_SESSION		"vigil"
/* Polling: from 0.2 s, times 1.5, up to 2 s, plus 1 s per 2 MiB of log
 * (a poll reads the whole log), at most 30 s. */
#define DAYTONA_POLL_MIN	0.2
#define DAYTONA_POLL_MAX	2.0
#define DAYTONA_POLL_CAP	30.0

/* ------------------------------------------------------------------ */
/* Pure parts                                                          */
/* ------------------------------------------------------------------ */

/* Sets up a demultiplexer; see cloud.h. */
void
vg_daytona_demux_init(struct vg_daytona_demux *d,
    int (*out)(void *, int, const char *, size_t), void *arg)
{
	memset(d, 0, sizeof(*d));
	d->out = out;
	d->arg = arg;
}

/* Emits data of the current stream (none before the first marker). */
static int
demux_emit(struct vg_daytona_demux *d, const char *p, size_t n)
{
	if (n == 0 || d->stream == 0)
		return 0;
	return d->out(d->arg, d->stream, p, n);
}

/* Emits the marker bytes held back, which turned out to be data. */
static int
demux_flush(struct vg_daytona_demux *d)
{
	char held[2];
	int n = d->pend;

	d->pend = 0;
	if (n == 0)
		return 0;
	memset(held, d->pc, sizeof(held));
	return demux_emit(d, held, (size_t)n);
}

/* Feeds bytes of the log; see cloud.h. */
int
vg_daytona_demux_feed(struct vg_daytona_demux *d, const char *p, size_t n)
{
	size_t i = 0, run;
	unsigned char c;
	int r;

	while (i < n) {
		c = (unsigned char)p[i];
		if (d->pend > 0 && c == d->pc) {
			i++;
			if (++d->pend == 3) {
				d->stream = d->pc;
				d->pend = 0;
			}
			continue;
		}
		if (d->pend > 0 && (r = demux_flush(d)) != 0)
			return r;
		if (c == 1 || c == 2) {
			d->pc = c;
			d->pend = 1;
			i++;
			continue;
		}
		for (run = i; run < n && p[run] != 1 && p[run] != 2; run++)
			;
		if ((r = demux_emit(d, p + i, run - i)) != 0)
			return r;
		i = run;
	}
	return 0;
}

/* Ends the log: half a marker is data. */
int
vg_daytona_demux_end(struct vg_daytona_demux *d)
{
	return demux_flush(d);
}

/* Body of POST /sandbox; see cloud.h. */
void
vg_daytona_create_body(const struct vg_attempt *a,
    const struct vg_cloud_conf *conf, struct vg_buf *out)
{
	const struct vg_manifest *m = a->m;
	struct vg_json_writer w;
	char *df;

	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	if (conf->snapshot != NULL && *conf->snapshot) {
		vg_json_key(&w, "snapshot");
		vg_json_str(&w, conf->snapshot);
	} else if (m->image != NULL && *m->image) {
		/* What the SDK's Image.base(image) sends. */
		vg_json_key(&w, "buildInfo");
		vg_json_obj_begin(&w);
		vg_json_key(&w, "dockerfileContent");
		df = vg_xasprintf("FROM %s\n", m->image);
		vg_json_str(&w, df);
		free(df);
		vg_json_obj_end(&w);
	}
	if (conf->region != NULL && *conf->region) {
		vg_json_key(&w, "target");
		vg_json_str(&w, conf->region);
	}
	vg_json_key(&w, "labels");
	vg_json_obj_begin(&w);
	vg_cloud_labels(a, &w);
	vg_json_obj_end(&w);
	if (a->res.cpus > 0) {
		vg_json_key(&w, "cpu");
		vg_json_int(&w, a->res.cpus);
	}
	if (a->res.memory > 0) {
		/* Whole GB, rounded up. */
		vg_json_key(&w, "memory");
		vg_json_int(&w, (long long)((a->res.memory + (1ULL << 30) -
		    1) >> 30));
	}
	if (a->res.gpus > 0) {
		vg_json_key(&w, "gpu");
		vg_json_int(&w, a->res.gpus);
	}
	/* isolation.network none: Daytona blocks every connection of
	 * the sandbox (docs/egress.md). */
	if (m->isolation.level != VG_ISO_NONE &&
	    vg_isolation_net(&m->isolation) == VG_NET_NONE) {
		vg_json_key(&w, "networkBlockAll");
		vg_json_bool(&w, 1);
	}
	if (!conf->keep) {
		/* Deleted as soon as it stops, should vigil not be there to
		 * delete it (0: "delete immediately upon stopping"). */
		vg_json_key(&w, "autoDeleteInterval");
		vg_json_int(&w, 0);
	}
	vg_json_obj_end(&w);
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

/* Reads state, errorReason and toolboxProxyUrl of a Sandbox reply. */
static int
sandbox_state(struct vg_cloud *c, char *state, size_t ssize, char *why,
    size_t wsize, char **tb, struct vg_err *e)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root;
	int r;

	if ((r = vg_cloud_json(c, &doc, "creating the sandbox", e)) != 0)
		return r;
	root = vg_json_root(doc);
	snprintf(state, ssize, "%s", vg_json_get_str(root, "state", ""));
	snprintf(why, wsize, "%s", vg_json_get_str(root, "errorReason", ""));
	if (tb != NULL && vg_json_get_str(root, "toolboxProxyUrl", NULL)) {
		free(*tb);
		*tb = vg_xstrdup(vg_json_get_str(root, "toolboxProxyUrl", ""));
	}
	vg_json_free(doc);
	return 0;
}

/* True for the states a new sandbox never leaves by itself. */
static int
state_failed(const char *s)
{
	return strcmp(s, "error") == 0 || strcmp(s, "build_failed") == 0 ||
	    strcmp(s, "destroyed") == 0 || strcmp(s, "destroying") == 0;
}

/* Opens t->tb on the sandbox's toolbox (tb: its toolboxProxyUrl, or
 * NULL). */
static int
toolbox_open(struct vg_cloud_task *t, const char *tb, struct vg_err *e)
{
	char *base;
	int r;

	/* The toolbox of older deployments sits under the API itself
	 * (toolbox.deprecated.controller.ts). */
	base = tb != NULL && *tb ? vg_xasprintf("%s%s%s", tb,
	    tb[strlen(tb) - 1] == '/' ? "" : "/", t->sandbox) :
	    vg_xasprintf("%s/toolbox/%s/toolbox", t->c.endpoint, t->sandbox);
	r = vg_cloud_open_like(&t->tb, &t->c, base, e);
	t->have_tb = 1;
	free(base);
	if (r == 0)
		vg_http_add_header(t->tb.h, "X-Daytona-Split-Output: true");
	return r;
}

/* Opens t's toolbox connection (tb: the sandbox's toolboxProxyUrl, may
 * be NULL) and creates process session name there (t->session). */
static int
toolbox_session(struct vg_cloud_task *t, const char *tb, const char *name,
    struct vg_err *e)
{
	struct vg_buf sess = VG_BUF_INIT;
	struct vg_json_writer w;
	int r;

	if ((r = toolbox_open(t, tb, e)) != 0)
		return r;
	vg_json_writer_init(&w, &sess);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "sessionId");
	vg_json_str(&w, name);
	vg_json_obj_end(&w);
	if ((r = vg_cloud_call(&t->tb, "POST", "/process/session", &sess, NULL,
	    "creating the session", e)) == 0)
		t->session = vg_xstrdup(name);
	vg_buf_release(&sess);
	return r;
}

/* POST /sandbox, then GET /sandbox/{id} until it has started. */
static int
daytona_create(struct vg_cloud_task *t, struct vg_err *e)
{
	struct vg_buf body = VG_BUF_INIT;
	struct vg_json_doc *doc = NULL;
	struct vg_cloud_req rq = {
		.method = "POST",
		.path = "/sandbox",
		.body = &body,
		.what = "creating the sandbox",
		.timeout = VG_CLOUD_CREATE_TIMEOUT,
	};
	const char *id;
	char state[64], why[256], *tb = NULL, *path = NULL;
	double end = vg_mono() + VG_CLOUD_CREATE_TIMEOUT, pause = 0.25;
	int r;

	vg_daytona_create_body(t->a, t->c.conf, &body);
	if ((r = vg_cloud_request(&t->c, &rq, e)) != 0 ||
	    (r = vg_cloud_json(&t->c, &doc, rq.what, e)) != 0)
		goto out;
	id = vg_json_get_str(vg_json_root(doc), "id", NULL);
	if (id == NULL || *id == '\0') {
		r = vg_err_set(e, VG_EBACKEND, "daytona: creating the sandbox: "
		    "reply has no \"id\"");
		goto out;
	}
	t->sandbox = vg_xstrdup(id);
	if ((r = sandbox_state(&t->c, state, sizeof(state), why,
	    sizeof(why), &tb, e)) != 0)
		goto out;
	path = vg_xasprintf("/sandbox/%s", t->sandbox);
	while (strcmp(state, "started") != 0) {
		if (state_failed(state)) {
			r = vg_err_set(e, VG_EBACKEND, "daytona: sandbox %s is "
			    "'%s'%s%s", t->sandbox, state, why[0] ? ": " : "",
			    why);
			goto out;
		}
		if (vg_mono() > end) {
			r = vg_err_set(e, VG_ETIMEOUT, "daytona: sandbox %s "
			    "still '%s' after %.0f s", t->sandbox, state,
			    VG_CLOUD_CREATE_TIMEOUT);
			goto out;
		}
		if ((r = vg_cloud_sleep(t->c.stop, pause)) != 0) {
			vg_err_set(e, r, "daytona: interrupted while sandbox %s "
			    "was '%s'", t->sandbox, state);
			goto out;
		}
		pause = pause * 2 < 2 ? pause * 2 : 2;
		if ((r = vg_cloud_call(&t->c, "GET", path, NULL, NULL,
		    "waiting for the sandbox", e)) != 0 ||
		    (r = sandbox_state(&t->c, state, sizeof(state), why,
		    sizeof(why), &tb, e)) != 0)
			goto out;
	}
	r = toolbox_session(t, tb, DAYTONA_SESSION, e);
out:
	vg_json_free(doc);
	vg_buf_release(&body);
	free(path);
	free(tb);
	return r;
}

/* Sessions: a started sandbox's toolbox and a process session of this
 * command's own, which kill deletes without touching the others. */
static int
daytona_attach(struct vg_cloud_task *t, struct vg_err *e)
{
	char state[64], why[256], *tb = NULL, *path, name[64];
	int r;

	free(t->session);
	t->session = NULL;
	path = vg_xasprintf("/sandbox/%s", t->sandbox);
	r = vg_cloud_call(&t->c, "GET", path, NULL, NULL, "finding the "
	    "session's sandbox", e);
	free(path);
	if (r == 0 && (r = sandbox_state(&t->c, state, sizeof(state), why,
	    sizeof(why), &tb, e)) == 0 && strcmp(state, "started") != 0)
		r = vg_err_set(e, VG_EBACKEND, "daytona: the session's sandbox "
		    "%s is '%s'%s%s", t->sandbox, state, why[0] ? ": " : "",
		    why);
	snprintf(name, sizeof(name), "%s-%d-%d", DAYTONA_SESSION,
	    t->a->task != NULL ? t->a->task->index : 0, t->a->attempt);
	if (r == 0)
		r = toolbox_session(t, tb, name, e);
	free(tb);
	return r;
}

/* POST .../session/S/exec with the attempt's script, asynchronously. */
static int
daytona_exec(struct vg_cloud_task *t, struct vg_err *e)
{
	struct vg_buf body = VG_BUF_INIT, script = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_json_doc *doc = NULL;
	const char *id;
	char *path;
	int r;

	vg_cloud_script(t->a, t->a->m->workdir, &script);
	vg_json_writer_init(&w, &body);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "command");
	vg_json_str(&w, vg_buf_str(&script));
	vg_json_key(&w, "runAsync");
	vg_json_bool(&w, 1);
	vg_json_obj_end(&w);
	path = vg_xasprintf("/process/session/%s/exec", t->session);
	if ((r = vg_cloud_call(&t->tb, "POST", path, &body, NULL,
	    "starting the command", e)) != 0 ||
	    (r = vg_cloud_json(&t->tb, &doc, "starting the command", e)) != 0)
		goto out;
	id = vg_json_get_str(vg_json_root(doc), "cmdId", NULL);
	if (id == NULL || *id == '\0' || strchr(id, '/') != NULL) {
		r = vg_err_set(e, VG_EBACKEND, "daytona: starting the command: "
		    "reply has no valid \"cmdId\"");
		goto out;
	}
	t->cmd = vg_xstrdup(id);
out:
	vg_json_free(doc);
	vg_buf_release(&body);
	vg_buf_release(&script);
	free(path);
	return r;
}

/* Demultiplexer output: into the task's files. */
static int
log_out(void *arg, int stream, const char *p, size_t n)
{
	return vg_cloud_out_write(arg, stream, p, n);
}

/* vg_http_sink feeding the demultiplexer. */
static int
log_sink(void *arg, const char *p, size_t n)
{
	return vg_daytona_demux_feed(arg, p, n);
}

/* Reads the whole log so far and keeps what is new; final once the
 * command has exited (its log is then complete). */
static int
fetch_logs(struct vg_cloud_task *t, int final, struct vg_err *e)
{
	struct vg_daytona_demux d;
	struct vg_cloud_req rq = {
		.method = "GET",
		.what = "reading the command's output",
		.sink = log_sink,
		.sink_arg = &d,
	};
	char *path = vg_xasprintf("/process/session/%s/command/%s/logs",
	    t->session, t->cmd);
	int r;

	rq.path = path;
	vg_cloud_out_rewind(&t->out);
	vg_daytona_demux_init(&d, log_out, &t->out);
	r = vg_cloud_request(&t->tb, &rq, e);
	if (r == 0 && final)
		r = vg_daytona_demux_end(&d);
	free(path);
	return r;
}

/* The command's exitCode, or -1 while it runs. */
static int
command_exit(struct vg_cloud_task *t, long *code, struct vg_err *e)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *ec;
	char *path = vg_xasprintf("/process/session/%s/command/%s",
	    t->session, t->cmd);
	int r;

	*code = -1;
	r = vg_cloud_call(&t->tb, "GET", path, NULL, NULL,
	    "asking for the command's status", e);
	free(path);
	if (r != 0 || (r = vg_cloud_json(&t->tb, &doc, "command status",
	    e)) != 0)
		return r;
	ec = vg_json_get(vg_json_root(doc), "exitCode");
	if (ec != NULL && ec->type == VG_JSON_NUMBER)
		*code = ec->num >= 0 && ec->num <= 255 ? (long)ec->num : 255;
	vg_json_free(doc);
	return 0;
}

/* Polls status and output until the command exits; see cloud.h. */
static int
daytona_wait(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	double pause = DAYTONA_POLL_MIN, cap, left;
	int r, bad = 0;

	for (;;) {
		if ((r = command_exit(t, code, e)) != 0 ||
		    (r = fetch_logs(t, *code >= 0, e)) != 0) {
			/* A poll that failed transiently (the toolbox
			 * proxy reset the connection, a 5xx) is made
			 * again: each one reads the log from its start. */
			if ((r != VG_EIO && r != VG_EAGAIN) ||
			    ++bad >= VG_CLOUD_TRIES)
				return r;
			if ((r = vg_cloud_sleep(t->c.stop,
			    vg_cloud_backoff(bad, 0, 0.5))) != 0)
				return vg_err_set(e, r, "daytona: "
				    "interrupted");
			vg_err_init(e);
			*code = -1;
			continue;
		}
		bad = 0;
		if (*code >= 0)
			return 0;
		if (deadline > 0 && (left = deadline - vg_mono()) <= 0)
			return vg_err_set(e, VG_ETIMEOUT, "daytona: timed out");
		cap = DAYTONA_POLL_MAX + (double)(t->out.written[1] +
		    t->out.written[2]) / (2 << 20);
		cap = cap < DAYTONA_POLL_CAP ? cap : DAYTONA_POLL_CAP;
		pause = pause * 1.5 < cap ? pause * 1.5 : cap;
		if ((r = vg_cloud_sleep(t->c.stop, deadline > 0 && left <
		    pause ? left : pause)) != 0)
			return vg_err_set(e, r, "daytona: interrupted");
	}
}

/*
 * Takes over the recorded command of t->sandbox (see cloud.h): the
 * sandbox must still be started (GET /sandbox/ID) and know the command
 * (GET .../session/S/command/C); VG_ENOENT otherwise.
 */
static int
daytona_resume(struct vg_cloud_task *t, struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	char state[64], why[256], *tb = NULL, *path;
	int r;

	if (t->session == NULL)
		return vg_err_set(e, VG_ENOENT, "daytona: no session recorded");
	path = vg_xasprintf("/sandbox/%s", t->sandbox);
	r = vg_cloud_call(&t->c, "GET", path, NULL, ok404,
	    "looking up the sandbox", e);
	free(path);
	if (r == 0 && t->c.resp.status == 404)
		return vg_err_set(e, VG_ENOENT, "daytona: sandbox %s is gone",
		    t->sandbox);
	if (r != 0 || (r = sandbox_state(&t->c, state, sizeof(state), why,
	    sizeof(why), &tb, e)) != 0)
		goto out;
	if (strcmp(state, "started") != 0) {
		r = vg_err_set(e, VG_ENOENT, "daytona: sandbox %s is '%s'",
		    t->sandbox, state);
		goto out;
	}
	if ((r = toolbox_open(t, tb, e)) != 0)
		goto out;
	path = vg_xasprintf("/process/session/%s/command/%s", t->session,
	    t->cmd);
	r = vg_cloud_call(&t->tb, "GET", path, NULL, ok404,
	    "looking up the command", e);
	free(path);
	if (r == 0 && t->tb.resp.status == 404)
		r = vg_err_set(e, VG_ENOENT, "daytona: sandbox %s no longer "
		    "knows command %s", t->sandbox, t->cmd);
out:
	free(tb);
	return r;
}

/* Keeps the output so far, then deletes the session: the daemon sends
 * SIGTERM to its process group, waits, then SIGKILL (session/delete.go). */
static void
daytona_kill(struct vg_cloud_task *t, double grace, int *sig)
{
	struct vg_err e;
	char *path;

	(void)grace;
	*sig = SIGTERM;
	if (t->session == NULL)
		return;
	vg_err_init(&e);
	if (t->cmd != NULL)
		(void)fetch_logs(t, 0, &e);
	path = vg_xasprintf("/process/session/%s", t->session);
	(void)vg_cloud_call(&t->tb, "DELETE", path, NULL, NULL,
	    "stopping the command", &e);
	free(path);
}

/* Entries of the working directory listed, at most. */
#define DAYTONA_LS_MAX		200000
#define DAYTONA_LS_DEPTH	33

/* GET {toolbox}/files/download?path=P: the file's bytes. */
static int
daytona_get_file(struct vg_cloud_task *t, const char *path, int fd,
    unsigned long long max, struct vg_err *e)
{
	struct vg_buf p = VG_BUF_INIT;
	int r;

	vg_buf_adds(&p, "/files/download?path=");
	vg_http_escape(&p, path);
	r = vg_cloud_get_file(&t->tb, "GET", vg_buf_str(&p), NULL, fd, max,
	    e);
	vg_buf_release(&p);
	return r;
}

/* The type letter of a FileInfo: its mode is Go's FileMode.String() of
 * an lstat ("-rw-r--r--", "drwx...", "Lrwx..." for a link). */
static char
file_type(const struct vg_json_value *f)
{
	const char *mode = vg_json_get_str(f, "mode", "");
	const struct vg_json_value *dir = vg_json_get(f, "isDir");

	if (mode[0] == 'L')
		return 'l';
	if (dir != NULL && dir->type == VG_JSON_BOOL && dir->b)
		return 'd';
	return mode[0] == '-' ? 'f' : 'o';
}

/* GET {toolbox}/files?path=ROOT/REL ([FileInfo]), each entry a line of
 * out, directories below depth levels followed. */
static int
list_dir(struct vg_cloud_task *t, const char *root, const char *rel,
    int depth, size_t *n, struct vg_buf *out, struct vg_err *e)
{
	struct vg_buf p = VG_BUF_INIT;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *v, *f;
	const char *name;
	char *sub, type;
	size_t i;
	int r;

	vg_buf_adds(&p, "/files?path=");
	sub = *rel != '\0' ? vg_xasprintf("%s/%s", root, rel) :
	    vg_xstrdup(root);
	vg_http_escape(&p, sub);
	free(sub);
	if ((r = vg_cloud_call(&t->tb, "GET", vg_buf_str(&p), NULL, NULL,
	    "listing the outputs", e)) != 0 ||
	    (r = vg_cloud_json(&t->tb, &doc, "listing the outputs", e)) != 0)
		goto out;
	v = vg_json_root(doc);
	if (v->type != VG_JSON_ARRAY) {
		r = vg_err_set(e, VG_EBACKEND, "daytona: listing the outputs: "
		    "the reply is not a list of files");
		goto out;
	}
	for (i = 0; i < v->len && r == 0; i++) {
		f = v->items[i];
		name = vg_json_get_str(f, "name", "");
		if (*name == '\0' || strchr(name, '/') != NULL ||
		    strchr(name, '\n') != NULL || strcmp(name, ".") == 0 ||
		    strcmp(name, "..") == 0)
			continue;
		if (++*n > DAYTONA_LS_MAX) {
			r = vg_err_set(e, VG_ELIMIT, "daytona: outputs: more "
			    "than %d entries in the working directory",
			    DAYTONA_LS_MAX);
			break;
		}
		type = file_type(f);
		sub = *rel != '\0' ? vg_xasprintf("%s/%s", rel, name) :
		    vg_xstrdup(name);
		vg_buf_printf(out, "%c %.0f %s\n", type, type == 'f' &&
		    vg_json_get_num(f, "size", 0) > 0 ?
		    vg_json_get_num(f, "size", 0) : 0, sub);
		if (type == 'd' && depth < DAYTONA_LS_DEPTH)
			r = list_dir(t, root, sub, depth + 1, n, out, e);
		free(sub);
	}
out:
	vg_json_free(doc);
	vg_buf_release(&p);
	return r;
}

/* The command's working directory (the manifest's workdir, relative to
 * GET {toolbox}/work-dir), then the tree below it by GET /files. */
static int
daytona_list_tree(struct vg_cloud_task *t, struct vg_buf *out,
    struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const char *wd = t->a->m->workdir, *dir;
	char *root = NULL;
	size_t n = 0;
	int r;

	if (wd != NULL && wd[0] == '/')
		root = vg_xstrdup(wd);
	else if ((r = vg_cloud_call(&t->tb, "GET", "/work-dir", NULL, NULL,
	    "finding the working directory", e)) != 0 ||
	    (r = vg_cloud_json(&t->tb, &doc, "finding the working directory",
	    e)) != 0)
		goto out;
	else if ((dir = vg_json_get_str(vg_json_root(doc), "dir", NULL)) ==
	    NULL || dir[0] != '/') {
		r = vg_err_set(e, VG_EBACKEND, "daytona: finding the working "
		    "directory: the reply has no absolute \"dir\"");
		goto out;
	} else
		root = wd != NULL && *wd != '\0' ? vg_xasprintf("%s/%s", dir,
		    wd) : vg_xstrdup(dir);
	vg_buf_printf(out, "%s\n", root);
	r = list_dir(t, root, "", 0, &n, out, e);
out:
	vg_json_free(doc);
	free(root);
	return r;
}

/* DELETE /sandbox/{id}; a sandbox already gone is fine. */
static int
daytona_destroy(struct vg_cloud *c, const char *id, struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	struct vg_buf path = VG_BUF_INIT;
	int r;

	vg_buf_adds(&path, "/sandbox/");
	vg_http_escape(&path, id);
	r = vg_cloud_call(c, "DELETE", vg_buf_str(&path), NULL, ok404,
	    "deleting the sandbox", e);
	vg_buf_release(&path);
	return r;
}

/* GET /sandbox?labels=JSON (ListSandboxesResponse: items, nextCursor). */
static char *
daytona_list_path(struct vg_cloud *c, const char *run_id, const char *cursor)
{
	struct vg_buf filt = VG_BUF_INIT, path = VG_BUF_INIT;
	struct vg_json_writer w;

	(void)c;
	vg_json_writer_init(&w, &filt);
	vg_json_obj_begin(&w);
	vg_json_key(&w, VG_CLOUD_LABEL);
	vg_json_str(&w, "1");
	if (run_id != NULL) {
		vg_json_key(&w, VG_CLOUD_LABEL_RUN);
		vg_json_str(&w, run_id);
	}
	vg_json_obj_end(&w);
	vg_buf_adds(&path, "/sandbox?limit=100&labels=");
	vg_http_escape(&path, vg_buf_str(&filt));
	if (cursor != NULL) {
		vg_buf_adds(&path, "&cursor=");
		vg_http_escape(&path, cursor);
	}
	vg_buf_release(&filt);
	return vg_buf_detach(&path);
}

/* One authenticated request for `vigil doctor`. */
static int
daytona_ping(struct vg_cloud *c, struct vg_err *e)
{
	return vg_cloud_call(c, "GET", "/sandbox?limit=1", NULL, NULL,
	    "listing sandboxes", e);
}

/* The daytona: section. */
static const struct vg_msection daytona_msection = {
	.key = "daytona",
	.schema = &vg_cloud_schema,
	.size = sizeof(struct vg_cloud_conf),
	.help = "Daytona",
};

static const struct vg_cloud_ops daytona_cloud = {
	/* CreateSandbox takes "gpu", a count. */
	.gpus = VG_CLOUD_GPU_COUNT,
	.name = "daytona",
	.token_env = "DAYTONA_API_KEY",
	.endpoint_env = "DAYTONA_API_URL",
	.endpoint = "https://app.daytona.io/api",
	.section = &daytona_msection,
	.create = daytona_create,
	.exec = daytona_exec,
	.attach = daytona_attach,
	.wait = daytona_wait,
	.kill = daytona_kill,
	.destroy = daytona_destroy,
	.list_path = daytona_list_path,
	.list_items = "items",
	.list_id = "id",
	.list_labels = "labels",
	.list_next = "nextCursor",
	.ping = daytona_ping,
	.reattach = daytona_resume,
	.get_file = daytona_get_file,
	.list_tree = daytona_list_tree,
};

/* ---- the backend: each op is the shared cloud implementation
 * (cloud.c) given daytona's table above ---- */

/* backend op: run; the attempt in a new sandbox, in the monitor. */
static int
daytona_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	return vg_cloud_run(&daytona_cloud, a, r, e);
}

/* backend op: reap */
static int
daytona_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	return vg_cloud_reap(&daytona_cloud, m, run_id, task, report, e);
}

/* backend op: reattach */
static int
daytona_reattach(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	return vg_cloud_reattach(&daytona_cloud, a, r, e);
}

/* backend op: probe */
static void
daytona_probe(struct vg_buf *out)
{
	vg_cloud_probe(&daytona_cloud, out);
}

/* plugin op: validate */
static int
daytona_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	return vg_cloud_validate(&daytona_cloud, m, d);
}

/* plugin op: host_check */
static void
daytona_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	vg_cloud_host_check(&daytona_cloud, m, why);
}

/* backend op: session_open */
static int
daytona_session_open(struct vg_session *s, struct vg_err *e)
{
	return vg_cloud_session_open(&daytona_cloud, s, e);
}

/* backend op: session_exec */
static int
daytona_session_exec(const struct vg_session *s, const struct vg_session_cmd *c,
    struct vg_result *r, struct vg_err *e)
{
	return vg_cloud_session_exec(&daytona_cloud, s, c, r, e);
}

/* backend op: session_close */
static int
daytona_session_close(const struct vg_session *s, struct vg_err *e)
{
	return vg_cloud_session_close(&daytona_cloud, s, e);
}

/* backend op: timeout_slack */
static double
daytona_timeout_slack(const struct vg_attempt *a)
{
	return vg_cloud_timeout_slack(&daytona_cloud, a);
}

static const struct vg_msection *const daytona_sections[] = {
	&daytona_msection, NULL
};

const struct vg_backend_ops vg_backend_daytona = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "daytona",
		.flags = VG_PLUGIN_NONET,
		.help = "a daytona sandbox",
		.sections = daytona_sections,
		.validate = daytona_validate,
		.host_check = daytona_host_check,
	},
	.probe = daytona_probe,
	.run = daytona_run,
	.reap = daytona_reap,
	.pool = vg_cloud_pool,
	.session_open = daytona_session_open,
	.session_exec = daytona_session_exec,
	.session_close = daytona_session_close,
	.reattach = daytona_reattach,
	.timeout_slack = daytona_timeout_slack,
};

/*
 * cloud.c - the life cycle shared by the cloud sandbox backends; see
 * cloud.h.  Provider files describe requests and replies; this file
 * decides when to retry, how errors read, where output goes, and what
 * happens on timeout, cancel and exit.
 *
 * Retries follow the providers' own SDKs (@vercel/sandbox with-retry.ts:
 * network errors, 429 and 5xx, exponential backoff from 400 ms with
 * jitter; Daytona's and Modal's clients likewise): here 250 ms doubling
 * to at most 8 s, full jitter in the upper half, Retry-After honoured up
 * to 30 s, at most VG_CLOUD_TRIES tries.  Streams that may already have
 * started a command are retried only when the server refused them with
 * 429 or 502-504 before anything arrived.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/gpu.h"
#include "common/str.h"
#include "common/path.h"
#include "common/proc.h"
#include "backends/cloud.h"
#include "runner/manifest/schema-table.h"

#define CLOUD_JSON_MAX		(8u << 20)
#define CLOUD_BACKOFF_BASE	0.25
#define CLOUD_BACKOFF_MAX	8.0
#define CLOUD_RETRY_AFTER_MAX	30.0
/* Pages of sandboxes read by reap, at most. */
#define CLOUD_LIST_PAGES	100
/* Error bodies kept from a streamed reply. */
#define CLOUD_ERR_BODY_MAX	(64u << 10)

/* ------------------------------------------------------------------ */
/* Small pure helpers                                                  */
/* ------------------------------------------------------------------ */

/* A random number in [0, 1); jitter needs no quality. */
static double
rnd01(void)
{
	static unsigned long long s;

	if (s == 0)
		s = (unsigned long long)time(NULL) * 2654435761ULL ^
		    (unsigned long long)getpid() << 16 ^ 0x9e3779b97f4a7c15ULL;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (double)(s >> 11) / 9007199254740992.0;
}

/* The delay before try n+1; see cloud.h. */
double
vg_cloud_backoff(int n, double retry_after, double r01)
{
	double d = CLOUD_BACKOFF_BASE;
	int i;

	if (retry_after > 0)
		return retry_after < CLOUD_RETRY_AFTER_MAX ? retry_after :
		    CLOUD_RETRY_AFTER_MAX;
	for (i = 1; i < n && d < CLOUD_BACKOFF_MAX; i++)
		d *= 2;
	if (d > CLOUD_BACKOFF_MAX)
		d = CLOUD_BACKOFF_MAX;
	/* Between half and all of it, so clients that failed together do
	 * not come back together. */
	return d / 2 + d / 2 * r01;
}

/* Sleeps secs in slices of 50 ms, watching *stop. */
int
vg_cloud_sleep(const volatile sig_atomic_t *stop, double secs)
{
	double end = vg_mono() + secs, left;
	struct timespec ts;

	while ((left = end - vg_mono()) > 0) {
		if (stop != NULL && *stop)
			return VG_ECANCELED;
		if (left > 0.05)
			left = 0.05;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
	return stop != NULL && *stop ? VG_ECANCELED : 0;
}

/* Replaces each occurrence of secret in s by "***", within size. */
void
vg_cloud_redact(char *s, size_t size, const char *secret)
{
	struct vg_buf b = VG_BUF_INIT;
	const char *p = s, *q;
	size_t n;

	if (secret == NULL || (n = strlen(secret)) == 0 ||
	    strstr(s, secret) == NULL)
		return;
	while ((q = strstr(p, secret)) != NULL) {
		vg_buf_add(&b, p, (size_t)(q - p));
		vg_buf_adds(&b, "***");
		p = q + n;
	}
	vg_buf_adds(&b, p);
	snprintf(s, size, "%s", vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Joins the strings of a JSON array with "; ". */
static void
join_strings(const struct vg_json_value *v, char *out, size_t size)
{
	size_t i, k = 0;

	out[0] = '\0';
	for (i = 0; i < v->len && k + 1 < size; i++) {
		if (v->items[i]->type != VG_JSON_STRING)
			continue;
		k += (size_t)snprintf(out + k, size - k, "%s%s", k ? "; " : "",
		    v->items[i]->str);
	}
}

/* The provider's error message in a reply body; see cloud.h. */
void
vg_cloud_error_text(const char *body, size_t len, char *out, size_t size)
{
	struct vg_json_limits lim = { .max_bytes = CLOUD_ERR_BODY_MAX };
	const struct vg_json_value *root, *m, *err;
	struct vg_json_doc *doc;

	out[0] = '\0';
	if (body == NULL || len == 0 ||
	    vg_json_parse(body, len, &lim, &doc, NULL) != 0)
		return;
	root = vg_json_root(doc);
	m = vg_json_get(root, "message");
	err = vg_json_get(root, "error");
	if (m != NULL && m->type == VG_JSON_STRING)
		snprintf(out, size, "%s", m->str);
	else if (m != NULL && m->type == VG_JSON_ARRAY)
		join_strings(m, out, size);
	else if (err != NULL && err->type == VG_JSON_OBJECT &&
	    vg_json_get_str(err, "message", NULL) != NULL)
		snprintf(out, size, "%s", vg_json_get_str(err, "message", ""));
	else if (err != NULL && err->type == VG_JSON_STRING)
		snprintf(out, size, "%s", err->str);
	vg_json_free(doc);
}

/* ------------------------------------------------------------------ */
/* Connection                                                          */
/* ------------------------------------------------------------------ */

/* The manifest section of the provider. */
const struct vg_cloud_conf *
vg_cloud_conf_of(const struct vg_cloud_ops *ops, const struct vg_manifest *m)
{
	if (m == NULL)
		return NULL;
	return vg_manifest_conf(m, ops->section);
}

/* The value of variable name, or NULL when unset or empty. */
static const char *
env_value(const char *name)
{
	const char *v = name != NULL ? getenv(name) : NULL;

	return v != NULL && *v != '\0' ? v : NULL;
}

/* Opens the HTTP client of c on base and sends the token with it. */
static int
cloud_connect(struct vg_cloud *c, const char *base, struct vg_err *e)
{
	char *hdr;
	int r;

	c->endpoint = vg_xstrdup(base);
	if ((r = vg_http_open(base, &c->h, e)) != 0)
		return vg_err_prefix(e, "%s: ", c->ops->name);
	hdr = vg_xasprintf("Authorization: Bearer %s", c->token);
	vg_http_add_header(c->h, hdr);
	memset(hdr, 0, strlen(hdr));
	free(hdr);
	vg_http_add_header(c->h, "User-Agent: vigil");
	return 0;
}

/* The token variable of ops under conf. */
static const char *
token_var(const struct vg_cloud_ops *ops, const struct vg_cloud_conf *conf)
{
	return conf != NULL && conf->token_env != NULL && *conf->token_env ?
	    conf->token_env : ops->token_env;
}

/* Finds the credentials by presence; see cloud.h. */
int
vg_cloud_creds(const struct vg_cloud_ops *ops,
    const struct vg_cloud_conf *conf, const char **where, struct vg_err *e)
{
	const char *tv = token_var(ops, conf);

	if (where != NULL)
		*where = tv;
	if (env_value(tv) == NULL)
		return vg_err_set(e, VG_EINVAL, "%s: no API token: environment "
		    "variable %s is not set (%s.token_env names the variable "
		    "to read)", ops->name, tv, ops->name);
	if (ops->team_env != NULL && env_value(ops->team_env) == NULL)
		return vg_err_set(e, VG_EINVAL, "%s: environment variable %s "
		    "is not set: the API needs the team id", ops->name,
		    ops->team_env);
	if (ops->project_env != NULL && env_value(ops->project_env) == NULL)
		return vg_err_set(e, VG_EINVAL, "%s: environment variable %s "
		    "is not set: the API needs the project id", ops->name,
		    ops->project_env);
	return 0;
}

/* Opens a connection on an explicit endpoint; see cloud.h. */
int
vg_cloud_open_at(struct vg_cloud *c, const struct vg_cloud_ops *ops,
    const struct vg_cloud_conf *conf, const char *endpoint,
    const char *token_env, const volatile sig_atomic_t *stop,
    struct vg_err *e)
{
	struct vg_cloud_conf tc;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&tc, 0, sizeof(tc));
	c->ops = ops;
	c->conf = conf;
	c->stop = stop;
	if (token_env != NULL)
		tc.token_env = vg_xstrdup(token_env);
	rc = vg_cloud_creds(ops, token_env != NULL ? &tc : conf,
	    &c->token_env, e);
	if (token_env != NULL)
		c->token_env = token_env;
	free(tc.token_env);
	if (rc != 0)
		return rc;
	c->token = vg_xstrdup(env_value(c->token_env));
	if (ops->team_env != NULL)
		c->team = vg_xstrdup(env_value(ops->team_env));
	if (ops->project_env != NULL)
		c->project = vg_xstrdup(env_value(ops->project_env));
	return cloud_connect(c, endpoint, e);
}

/* Opens a connection; see cloud.h. */
int
vg_cloud_open(struct vg_cloud *c, const struct vg_cloud_ops *ops,
    const struct vg_cloud_conf *conf, const volatile sig_atomic_t *stop,
    struct vg_err *e)
{
	const char *ep;

	if (ops->open != NULL)
		return ops->open(c, ops, conf, stop, e);
	ep = conf != NULL && conf->endpoint != NULL && *conf->endpoint ?
	    conf->endpoint : env_value(ops->endpoint_env) != NULL ?
	    env_value(ops->endpoint_env) : ops->endpoint;
	return vg_cloud_open_at(c, ops, conf, ep, NULL, stop, e);
}

/* A second connection with the same credentials; see cloud.h. */
int
vg_cloud_open_like(struct vg_cloud *dst, const struct vg_cloud *c,
    const char *base, struct vg_err *e)
{
	memset(dst, 0, sizeof(*dst));
	dst->ops = c->ops;
	dst->conf = c->conf;
	dst->stop = c->stop;
	dst->token_env = c->token_env;
	dst->token = vg_xstrdup(c->token);
	dst->team = vg_xstrdup(c->team);
	dst->project = vg_xstrdup(c->project);
	return cloud_connect(dst, base, e);
}

/* Closes c; the token is wiped from memory. */
void
vg_cloud_close(struct vg_cloud *c)
{
	if (c->priv != NULL && c->ops != NULL && c->ops->close_priv != NULL)
		c->ops->close_priv(c->priv);
	vg_http_free(c->h);
	vg_http_resp_release(&c->resp);
	if (c->token != NULL)
		memset(c->token, 0, strlen(c->token));
	free(c->token);
	free(c->endpoint);
	free(c->team);
	free(c->project);
	memset(c, 0, sizeof(*c));
}

/* What a sink sees of a streamed reply: only 2xx bodies. */
struct gate {
	struct vg_cloud		 *c;
	const struct vg_cloud_req *rq;
	long			  status;	/* 0 until known */
	int			  delivered;
	struct vg_buf		  err;		/* error body, bounded */
};

/* The status of the reply being received, from its status line. */
static long
status_of_headers(const struct vg_http_resp *resp)
{
	long st = 0;

	if (resp->headers.data != NULL)
		sscanf(resp->headers.data, "HTTP/%*s %ld", &st);
	return st;
}

/* vg_http_sink in front of the caller's sink. */
static int
gate_sink(void *arg, const char *p, size_t n)
{
	struct gate *g = arg;

	if (g->status == 0)
		g->status = status_of_headers(&g->c->resp);
	if (g->status >= 400) {
		if (g->err.len + n <= CLOUD_ERR_BODY_MAX)
			vg_buf_add(&g->err, p, n);
		return 0;
	}
	g->delivered = 1;
	return g->rq->sink(g->rq->sink_arg, p, n);
}

/* True when status is an answer the caller expects. */
static int
status_ok(long st, const long *ok)
{
	if (st < 400)
		return 1;
	for (; ok != NULL && *ok != 0; ok++)
		if (st == *ok)
			return 1;
	return 0;
}

/* True for statuses worth another try. */
static int
status_transient(long st, int once)
{
	if (once)
		return st == 429 || st == 502 || st == 503 || st == 504;
	return st == 429 || st >= 500;
}

/* Builds the error for a reply with a status that is not ok. */
static int
status_error(struct vg_cloud *c, const struct vg_cloud_req *rq,
    const struct vg_buf *body, int tries, struct vg_err *e)
{
	char text[512], more[160] = "";
	long st = c->resp.status;
	/* 429 and 5xx that outlasted the retries stay transient: a new
	 * attempt may get through (docs/backends/daytona.md, vercel.md). */
	int rc = st == 404 ? VG_ENOENT : st == 401 || st == 403 ?
	    VG_EDENIED : st == 429 || st >= 500 ? VG_EAGAIN : VG_EBACKEND;

	vg_cloud_error_text(body->data, body->len, text, sizeof(text));
	if (st == 401 || st == 403)
		snprintf(more, sizeof(more), "; check the token in %s",
		    c->token_env);
	else if (tries > 1)
		snprintf(more, sizeof(more), "; gave up after %d tries", tries);
	vg_err_set(e, rc, "%s: %s: %s%s(HTTP %ld%s)", c->ops->name, rq->what,
	    text, text[0] ? " " : "", st, more);
	vg_cloud_redact(e->msg, sizeof(e->msg), c->token);
	return rc;
}

/* Sends a request with retries; see cloud.h. */
int
vg_cloud_request(struct vg_cloud *c, const struct vg_cloud_req *rq,
    struct vg_err *e)
{
	struct gate g = { .c = c, .rq = rq, .err = VG_BUF_INIT };
	struct vg_http_req req = {
		.method = rq->method,
		.path = rq->path,
		.body = rq->body != NULL ? vg_buf_str(rq->body) : NULL,
		.body_len = rq->body != NULL ? rq->body->len : 0,
		.timeout = rq->timeout > 0 ? rq->timeout : rq->timeout < 0 ?
		    0 : VG_CLOUD_CALL_TIMEOUT,
		.max_body = CLOUD_JSON_MAX,
		.sink = rq->sink != NULL ? gate_sink : NULL,
		.sink_arg = &g,
		.stop = c->stop,
	};
	struct vg_err le;
	char ra[32];
	double after;
	int r, n;

	for (n = 1;; n++) {
		vg_err_init(&le);
		g.status = 0;
		vg_buf_reset(&g.err);
		r = vg_http_do(c->h, &req, &c->resp, &le);
		if (r == 0 && !status_ok(c->resp.status, rq->ok) &&
		    status_transient(c->resp.status, rq->once) &&
		    !g.delivered && n < VG_CLOUD_TRIES) {
			after = 0;
			if (vg_http_resp_header(&c->resp, "Retry-After", ra,
			    sizeof(ra)))
				after = strtod(ra, NULL);
		} else if (r == VG_EIO && !rq->once && !g.delivered &&
		    n < VG_CLOUD_TRIES)
			/* (Not once part of a body reached the sink: the
			 * caller reads it again from where it wants.) */
			after = 0;
		else
			break;
		if (vg_cloud_sleep(c->stop, vg_cloud_backoff(n, after,
		    rnd01())) != 0) {
			r = vg_err_set(&le, VG_ECANCELED, "%s %s on %s: "
			    "interrupted", rq->method, rq->path, c->endpoint);
			break;
		}
	}
	if (r != 0) {
		vg_err_set(e, r, "%s: %s: %s%s", c->ops->name, rq->what,
		    le.msg, r == VG_EIO && n > 1 ? " (gave up after "
		    "several tries)" : "");
		vg_cloud_redact(e->msg, sizeof(e->msg), c->token);
	} else if (!status_ok(c->resp.status, rq->ok))
		r = status_error(c, rq, rq->sink != NULL ? &g.err :
		    &c->resp.body, n, e);
	vg_buf_release(&g.err);
	return r;
}

/* A plain call; see cloud.h. */
int
vg_cloud_call(struct vg_cloud *c, const char *method, const char *path,
    const struct vg_buf *body, const long *ok, const char *what,
    struct vg_err *e)
{
	struct vg_cloud_req rq = {
		.method = method,
		.path = path,
		.body = body,
		.ok = ok,
		.what = what,
	};

	return vg_cloud_request(c, &rq, e);
}

/* Parses the last reply; see cloud.h. */
int
vg_cloud_json(struct vg_cloud *c, struct vg_json_doc **docp, const char *what,
    struct vg_err *e)
{
	struct vg_json_limits lim = { .max_bytes = CLOUD_JSON_MAX };

	if (vg_json_parse(c->resp.body.data, c->resp.body.len, &lim, docp,
	    e) != 0)
		return vg_err_prefix(e, "%s: %s: reply: ", c->ops->name, what);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Attempt pieces                                                      */
/* ------------------------------------------------------------------ */

/* True for a name the shell accepts after export. */
static int
is_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_'))
			return 0;
	return 1;
}

/* The attempt as one sh script; see cloud.h. */
void
vg_cloud_script(const struct vg_attempt *a, const char *cwd,
    struct vg_buf *out)
{
	struct vg_strv env = VG_STRV_INIT, argv = VG_STRV_INIT;
	const char *eq;
	size_t i;

	vg_task_env(a, VG_ENV_IMAGE, &env);
	vg_attempt_argv(a, &argv);
	/* A subshell: an exit in the task must not end the provider's
	 * session shell. */
	vg_buf_adds(out, "(\n");
	for (i = 0; i < env.n; i++) {
		eq = strchr(env.v[i], '=');
		if (!is_name(env.v[i], (size_t)(eq - env.v[i])))
			continue;
		vg_buf_adds(out, "export ");
		vg_buf_add(out, env.v[i], (size_t)(eq - env.v[i]) + 1);
		vg_buf_shquote(out, eq + 1);
		vg_buf_addc(out, '\n');
	}
	if (cwd != NULL) {
		vg_buf_adds(out, "cd -- ");
		vg_buf_shquote(out, cwd);
		vg_buf_adds(out, " || exit 1\n");
	}
	vg_buf_adds(out, "exec");
	for (i = 0; i < argv.n; i++) {
		vg_buf_addc(out, ' ');
		vg_buf_shquote(out, argv.v[i]);
	}
	vg_buf_adds(out, "\n)");
	vg_strv_release(&env);
	vg_strv_release(&argv);
}

/* The owner label of the sandbox being made for a session ("session:ID":
 * reap leaves it to the session record), else NULL: this process. */
static const char *cloud_owner;

/* Adds the labels of a's sandbox to the open object of w. */
void
vg_cloud_labels(const struct vg_attempt *a, struct vg_json_writer *w)
{
	char owner[320], num[32];

	if (cloud_owner != NULL)
		vg_strlcpy(owner, cloud_owner, sizeof(owner));
	else
		vg_backend_owner_label(owner, sizeof(owner));
	vg_json_key(w, VG_CLOUD_LABEL);
	vg_json_str(w, "1");
	vg_json_key(w, VG_CLOUD_LABEL_RUN);
	vg_json_str(w, a->run_id != NULL ? a->run_id : "");
	vg_json_key(w, VG_CLOUD_LABEL_TASK);
	snprintf(num, sizeof(num), "%d", a->task != NULL ? a->task->index : 0);
	vg_json_str(w, num);
	vg_json_key(w, VG_CLOUD_LABEL_OWNER);
	vg_json_str(w, owner);
}

/* Opens the output files; see cloud.h. */
int
vg_cloud_out_open(struct vg_cloud_out *o, const char *task_dir,
    struct vg_err *e)
{
	memset(o, 0, sizeof(*o));
	o->fd[0] = o->fd[1] = o->fd[2] = -1;
	if (task_dir == NULL)
		return vg_err_set(e, VG_EINVAL, "attempt has no task "
		    "directory");
	if ((o->fd[1] = vg_task_output_open(task_dir, 0, "stdout", 0, e)) < 0 ||
	    (o->fd[2] = vg_task_output_open(task_dir, 0, "stderr", 0, e)) < 0)
		return VG_EIO;
	return 0;
}

/* Opens the output files of a reattached attempt; see cloud.h. */
int
vg_cloud_out_reopen(struct vg_cloud_out *o, const char *task_dir,
    struct vg_err *e)
{
	struct stat sb;
	int i;

	memset(o, 0, sizeof(*o));
	o->fd[0] = o->fd[1] = o->fd[2] = -1;
	if ((o->fd[1] = vg_task_output_reopen(task_dir, 0, "stdout", e)) < 0 ||
	    (o->fd[2] = vg_task_output_reopen(task_dir, 0, "stderr", e)) < 0)
		return VG_EIO;
	for (i = 1; i <= 2; i++)
		if (fstat(o->fd[i], &sb) == 0)
			o->written[i] = (unsigned long long)sb.st_size;
	return 0;
}

/* The record of a started command: "SANDBOX SESSION CMD". */
#define CLOUD_RECORD	"sandbox"

/* Writes the record; see cloud.h.  Ids with white space are not
 * recorded (they would not read back). */
void
vg_cloud_record(const struct vg_cloud_task *t)
{
	char *line, *path;

	if (t->a == NULL || t->a->task_dir == NULL || t->sandbox == NULL ||
	    t->cmd == NULL || strpbrk(t->sandbox, " \t\n") != NULL ||
	    strpbrk(t->cmd, " \t\n") != NULL || (t->session != NULL &&
	    strpbrk(t->session, " \t\n") != NULL))
		return;
	line = vg_xasprintf("%s %s %s %d\n", t->sandbox, t->session != NULL ?
	    t->session : "-", t->cmd, t->a->attempt);
	path = vg_path_join(t->a->task_dir, CLOUD_RECORD);
	(void)vg_write_file_atomic(path, line, strlen(line), 0600, NULL);
	free(path);
	free(line);
}

/* Reads the record of attempt into t; 0 when there is one. */
static int
record_read(struct vg_cloud_task *t)
{
	struct vg_buf b = VG_BUF_INIT;
	char box[256], sess[256], cmd[256], *path;
	int att = 0, rc = -1;

	path = vg_path_join(t->a->task_dir, CLOUD_RECORD);
	if (vg_read_file(path, 1024, &b, NULL) == 0 && b.data != NULL &&
	    sscanf(b.data, "%255s %255s %255s %d", box, sess, cmd, &att) == 4 &&
	    att == t->a->attempt) {
		t->sandbox = vg_xstrdup(box);
		t->session = strcmp(sess, "-") != 0 ? vg_xstrdup(sess) : NULL;
		t->cmd = vg_xstrdup(cmd);
		rc = 0;
	}
	free(path);
	vg_buf_release(&b);
	return rc;
}

/* Writes the part of a piece beyond what the file already holds. */
int
vg_cloud_out_write(struct vg_cloud_out *o, int stream, const char *p,
    size_t n)
{
	unsigned long long end, k;

	if (stream != 1 && stream != 2)
		return 0;
	end = o->seen[stream] + n;
	k = o->written[stream] > o->seen[stream] ?
	    o->written[stream] - o->seen[stream] : 0;
	o->seen[stream] = end;
	if (k >= n)
		return 0;
	p += k;
	n -= (size_t)k;
	o->written[stream] = end;
	if (o->tee != NULL && o->tee->out != NULL)
		o->tee->out(o->tee->arg, stream, p, n);
	return vg_write_all(o->fd[stream], p, n) != 0 ? VG_EIO : 0;
}

/* Before a whole log is read again. */
void
vg_cloud_out_rewind(struct vg_cloud_out *o)
{
	o->seen[1] = o->seen[2] = 0;
}

/* Closes the files. */
void
vg_cloud_out_close(struct vg_cloud_out *o)
{
	if (o->fd[1] >= 0)
		close(o->fd[1]);
	if (o->fd[2] >= 0)
		close(o->fd[2]);
	o->fd[1] = o->fd[2] = -1;
}

/* Sets up a line splitter. */
void
vg_cloud_lines_init(struct vg_cloud_lines *l, size_t max,
    int (*cb)(void *, const char *, size_t), void *arg)
{
	memset(l, 0, sizeof(*l));
	l->max = max;
	l->cb = cb;
	l->arg = arg;
}

/* Feeds bytes; see cloud.h. */
int
vg_cloud_lines_feed(void *arg, const char *p, size_t n)
{
	struct vg_cloud_lines *l = arg;
	const char *nl;
	size_t k;

	while (n > 0 && l->rc == 0) {
		nl = memchr(p, '\n', n);
		k = nl != NULL ? (size_t)(nl - p) : n;
		if (l->line.len + k > l->max) {
			l->rc = VG_ELIMIT;
			break;
		}
		vg_buf_add(&l->line, p, k);
		if (nl == NULL)
			break;
		l->rc = l->cb(l->arg, vg_buf_str(&l->line), l->line.len);
		vg_buf_reset(&l->line);
		p += k + 1;
		n -= k + 1;
	}
	return l->rc;
}

/* Delivers the last line; see cloud.h. */
int
vg_cloud_lines_end(struct vg_cloud_lines *l)
{
	if (l->rc == 0 && l->line.len > 0)
		l->rc = l->cb(l->arg, vg_buf_str(&l->line), l->line.len);
	vg_buf_reset(&l->line);
	return l->rc;
}

/* Frees the splitter's buffer. */
void
vg_cloud_lines_release(struct vg_cloud_lines *l)
{
	vg_buf_release(&l->line);
}

/* Adds a found sandbox. */
void
vg_cloud_boxes_add(struct vg_cloud_boxes *b, const char *id, const char *run,
    const char *task, const char *owner)
{
	struct vg_cloud_box *x;

	b->v = vg_xgrow(b->v, &b->cap, b->n + 1, sizeof(*b->v));
	x = &b->v[b->n++];
	x->id = vg_xstrdup(id);
	x->run = vg_xstrdup(run != NULL ? run : "?");
	x->task = vg_xstrdup(task != NULL ? task : "?");
	x->owner = vg_xstrdup(owner);
}

/* The next page's cursor of a list reply, or NULL. */
static const char *
next_cursor(const struct vg_cloud_ops *ops, const struct vg_json_value *root)
{
	const struct vg_json_value *v = root;

	if (ops->list_next_in != NULL)
		v = vg_json_get(root, ops->list_next_in);
	return vg_json_get_str(v, ops->list_next, NULL);
}

/* Lists vigil's sandboxes (of run_id, or all) page by page. */
static int
cloud_list(struct vg_cloud *c, const char *run_id,
    struct vg_cloud_boxes *out, struct vg_err *e)
{
	const struct vg_cloud_ops *ops = c->ops;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *list, *it, *lab;
	const char *next;
	char *cursor = NULL, *path;
	size_t i;
	int r = 0, page;

	for (page = 0; page < CLOUD_LIST_PAGES; page++) {
		path = ops->list_path(c, run_id, cursor);
		r = vg_cloud_call(c, "GET", path, NULL, NULL,
		    "listing sandboxes", e);
		free(path);
		if (r != 0 || (r = vg_cloud_json(c, &doc, "listing sandboxes",
		    e)) != 0)
			break;
		list = vg_json_get(vg_json_root(doc), ops->list_items);
		if (list == NULL || list->type != VG_JSON_ARRAY) {
			r = vg_err_set(e, VG_EBACKEND, "%s: listing sandboxes: "
			    "reply has no \"%s\" list", ops->name,
			    ops->list_items);
			break;
		}
		for (i = 0; i < list->len; i++) {
			it = list->items[i];
			lab = vg_json_get(it, ops->list_labels);
			if (vg_json_get_str(it, ops->list_id, NULL) == NULL ||
			    strcmp(vg_json_get_str(lab, VG_CLOUD_LABEL, ""),
			    "1") != 0)
				continue;
			vg_cloud_boxes_add(out, vg_json_get_str(it, ops->list_id,
			    ""), vg_json_get_str(lab, VG_CLOUD_LABEL_RUN, NULL),
			    vg_json_get_str(lab, VG_CLOUD_LABEL_TASK, NULL),
			    vg_json_get_str(lab, VG_CLOUD_LABEL_OWNER, NULL));
		}
		next = next_cursor(ops, vg_json_root(doc));
		free(cursor);
		cursor = next != NULL && *next ? vg_xstrdup(next) : NULL;
		vg_json_free(doc);
		doc = NULL;
		if (cursor == NULL)
			break;
	}
	vg_json_free(doc);
	free(cursor);
	return r;
}

/* Frees the list. */
void
vg_cloud_boxes_release(struct vg_cloud_boxes *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		free(b->v[i].id);
		free(b->v[i].run);
		free(b->v[i].task);
		free(b->v[i].owner);
	}
	free(b->v);
	memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

/* Set by SIGTERM/SIGINT while run() works; stops every request. */
static volatile sig_atomic_t cloud_stop;

/* Set by SIGALRM when the outputs after a timeout took too long. */
static volatile sig_atomic_t cloud_late;

/* Signal handler: asks run() to stop. */
static void
cloud_on_signal(int sig)
{
	(void)sig;
	cloud_stop = 1;
}

/* SIGALRM handler: the outputs after a timeout are late; stops their
 * requests. */
static void
cloud_on_late(int sig)
{
	(void)sig;
	cloud_late = 1;
	cloud_stop = 1;
}

/* Appends text to r's reason. */
static void
reason_add(struct vg_result *r, const char *text)
{
	size_t n = strlen(r->reason);

	snprintf(r->reason + n, sizeof(r->reason) - n, "%s%s",
	    n > 0 ? " " : "", text);
}

/* Fills r for the command's exit code. */
static void
result_exit(struct vg_result *r, long code)
{
	r->exit_code = (int)code;
	r->state = code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
	if (code != 0)
		snprintf(r->reason, sizeof(r->reason), "exit code %ld", code);
}

/* Starts task t of attempt a, and r as BACKEND_ERROR until known. */
static void
task_begin(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    struct vg_attempt *a, struct vg_result *r)
{
	memset(r, 0, sizeof(*r));
	memset(t, 0, sizeof(*t));
	t->a = a;
	t->out.fd[1] = t->out.fd[2] = -1;
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	r->started = vg_now();
	snprintf(r->node, sizeof(r->node), "%s", ops->name);
}

/* Frees what a task holds. */
static void
task_release(struct vg_cloud_task *t)
{
	vg_cloud_out_close(&t->out);
	if (t->have_tb)
		vg_cloud_close(&t->tb);
	vg_cloud_close(&t->c);
	free(t->sandbox);
	free(t->session);
	free(t->cmd);
}

/* Installs the stop handler for SIGTERM and SIGINT, saving the old. */
static void
cloud_signals(struct sigaction *old_term, struct sigaction *old_int)
{
	struct sigaction sa;

	cloud_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cloud_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, old_term);
	sigaction(SIGINT, &sa, old_int);
}

/* Deletes (or keeps, with keep) the sandbox of t at the end of an
 * attempt, noting in r what went wrong. */
static void
cloud_finish(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    const struct vg_cloud_conf *conf, struct vg_result *r)
{
	char msg[VG_ERR_MSG_MAX + 64];
	struct vg_err le;

	r->ended = vg_now();
	t->c.stop = NULL;
	if (t->sandbox == NULL)
		return;
	if (conf != NULL && conf->keep) {
		snprintf(msg, sizeof(msg), "(sandbox %s kept)", t->sandbox);
		reason_add(r, msg);
	} else {
		vg_err_init(&le);
		if (ops->destroy(&t->c, t->sandbox, &le) != 0) {
			snprintf(msg, sizeof(msg), "(sandbox %s not deleted: "
			    "%s)", t->sandbox, le.msg);
			reason_add(r, msg);
		}
	}
}

/*
 * The command of an attempt, from start to exit: exec, wait, and on
 * timeout or cancel the provider's kill.  Fills r.
 */
static int
run_command(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    double deadline, struct vg_result *r, struct vg_err *e)
{
	struct vg_err le;
	long code = -1;
	int rc, sig = 0;

	vg_err_init(&le);
	rc = ops->exec != NULL && !t->attached ? ops->exec(t, &le) : 0;
	if (rc == 0 && t->cmd != NULL && !t->attached)
		vg_cloud_record(t);
	if (rc == 0)
		rc = ops->wait(t, deadline, &code, &le);
	if (rc == VG_ECANCELED && !cloud_stop) {
		/* Aborted by a sink (a task file could not be written). */
		vg_err_set(e, VG_EIO, "%s", le.msg);
		return vg_result_fail(r, e);
	}
	if (rc != VG_ETIMEOUT && rc != VG_ECANCELED) {
		if (rc != 0) {
			vg_err_set(e, rc, "%s", le.msg);
			return vg_result_fail(r, e);
		}
		result_exit(r, code);
		return 0;
	}
	/* A stop request must not stop the stopping. */
	t->c.stop = t->tb.stop = NULL;
	ops->kill(t, t->a->kill_grace, &sig);
	r->signal = sig;
	r->exit_code = -1;
	r->state = rc == VG_ETIMEOUT ? VG_ST_TIMEOUT : VG_ST_CANCELLED;
	snprintf(r->reason, sizeof(r->reason), "%s after %.1f s; command "
	    "stopped with %s", rc == VG_ETIMEOUT ? "timed out" : "cancelled",
	    vg_now() - r->started, sig == SIGKILL ? "SIGKILL" : "SIGTERM");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Outputs                                                             */
/* ------------------------------------------------------------------ */

/* The listing command of vg_cloud_outputs when the provider has no
 * listing of its own: POSIX sh and find, as busybox has them too. */
#define OUTPUTS_LS							\
	"pwd -P || exit 1\n"						\
	"find . -mindepth 1 -maxdepth 33 | while IFS= read -r p; do\n"	\
	"p=${p#./}; s=0\n"						\
	"if [ -L \"$p\" ]; then t=l; elif [ -d \"$p\" ]; then t=d\n"	\
	"elif [ -f \"$p\" ]; then t=f; s=$(wc -c <\"$p\") || s=0\n"	\
	"else t=o; fi\n"						\
	"printf '%s %s %s\\n' \"$t\" $s \"$p\"\n"			\
	"done"
/* Bytes of listing read, and how long the listing may take. */
#define OUTPUTS_LS_MAX		(64u << 20)
#define OUTPUTS_LS_TIMEOUT	300.0
/* Lines of VG_OUTPUTS_LEFT written, at most. */
#define OUTPUTS_LEFT_MAX	1000

/* One bringing back. */
struct outs {
	const struct vg_cloud_ops *ops;
	struct vg_cloud_task	*t;	/* the listing's task, in the sandbox */
	const struct vg_outputs	*o;
	const char		*task_dir;
	const char		*root;	/* the working directory there */
	struct vg_buf		 left;
	int			 nleft;
	unsigned long long	 bytes, max_bytes;
	int			 files, max_files;
};

/* Where a get_file body goes. */
struct file_sink {
	int			fd;
	int			over;	/* the body went past max */
	unsigned long long	n, max;
};

/* vg_http_sink: into the file, up to its limit. */
static int
file_sink_write(void *arg, const char *p, size_t n)
{
	struct file_sink *f = arg;

	if (f->n + n > f->max) {
		f->over = 1;
		return VG_ELIMIT;
	}
	f->n += n;
	return vg_write_all(f->fd, p, n) != 0 ? VG_EIO : 0;
}

/* A file's body into fd; see cloud.h. */
int
vg_cloud_get_file(struct vg_cloud *c, const char *method, const char *path,
    const struct vg_buf *body, int fd, unsigned long long max,
    struct vg_err *e)
{
	struct file_sink f = { .fd = fd, .max = max };
	struct vg_cloud_req rq = {
		.method = method,
		.path = path,
		.body = body,
		.what = "reading an output file",
		/* Big files take long; a stalled reply ends all the same. */
		.timeout = VG_CLOUD_CREATE_TIMEOUT,
		.sink = file_sink_write,
		.sink_arg = &f,
	};
	int rc = vg_cloud_request(c, &rq, e);

	return rc != 0 && f.over ? VG_ELIMIT : rc;
}

/* True when rel, or a directory above it, matches an outputs glob. */
static int
outs_wanted(const struct vg_outputs *o, const char *rel)
{
	char *p = vg_xstrdup(rel), *slash = NULL;
	size_t i;
	int hit = 0;

	do {
		if (slash != NULL)
			*slash = '\0';
		for (i = 0; i < o->paths.n && !hit; i++)
			hit = fnmatch(o->paths.v[i], p, FNM_PATHNAME |
			    FNM_PERIOD) == 0;
	} while (!hit && (slash = strrchr(p, '/')) != NULL);
	free(p);
	return hit;
}

/* True for a path that is relative and stays below its root. */
static int
outs_rel_ok(const char *rel)
{
	const char *s = rel;
	size_t n;

	if (*rel == '\0' || *rel == '/')
		return 0;
	for (;;) {
		n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 &&
		    s[0] == '.' && s[1] == '.'))
			return 0;
		if (s[n] == '\0')
			return 1;
		s += n + 1;
	}
}

/* True when rel would land on a file of vigil's in the task directory
 * (runner/core/outputs.c lists them). */
static int
outs_reserved(const char *rel)
{
	static const char *const names[] = { "stdout", "stderr",
		"result.json", "monitor", "sandbox", "heartbeat",
		"outputs.json", VG_OUTPUTS_LEFT, "tmp", "outputs",
		"step", "step.log", NULL };
	size_t i, n = strcspn(rel, "/");

	for (i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == n && strncmp(rel, names[i], n) == 0)
			return 1;
	return n > 5 && strncmp(rel, "step.", 5) == 0 &&
	    strspn(rel + 5, "0123456789") == n - 5;
}

/* Lists rel as left in the sandbox, with why. */
static void
outs_leave(struct outs *x, const char *rel, const char *why)
{
	if (x->nleft++ < OUTPUTS_LEFT_MAX)
		vg_buf_printf(&x->left, "%s\t%s\n", why, rel);
}

/* Brings file rel (size bytes by the listing) into the task dir. */
static int
outs_file(struct outs *x, const char *rel, unsigned long long size,
    struct vg_err *e)
{
	char *dst = vg_path_join(x->task_dir, rel), *src, *tmp, *slash;
	struct stat sb;
	int fd, rc;

	if (x->files >= x->max_files || x->bytes + size > x->max_bytes) {
		outs_leave(x, rel, x->files >= x->max_files ?
		    "over outputs.max_files" : "over outputs.max_bytes");
		free(dst);
		return 0;
	}
	slash = strrchr(dst, '/');
	*slash = '\0';
	rc = vg_mkdir_p(dst, 0700, e);
	*slash = '/';
	if (rc != 0) {
		free(dst);
		return rc;
	}
	tmp = vg_xasprintf("%s.vigil-tmp", dst);
	src = vg_xasprintf("%s/%s", x->root, rel);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0) {
		rc = vg_err_errno(e, "%s: outputs: '%s'", x->ops->name, tmp);
		goto out;
	}
	rc = x->ops->get_file(x->t, src, fd, x->max_bytes - x->bytes, e);
	if (rc == 0 && fstat(fd, &sb) != 0)
		rc = vg_err_errno(e, "%s: outputs: '%s'", x->ops->name, tmp);
	close(fd);
	if (rc == VG_ELIMIT || rc == VG_ENOENT) {
		/* Grown past the limit, or gone, since the listing. */
		outs_leave(x, rel, rc == VG_ELIMIT ? "over outputs.max_bytes" :
		    "gone before it was read");
		rc = 0;
	} else if (rc == 0 && rename(tmp, dst) != 0) {
		rc = vg_err_errno(e, "%s: outputs: '%s'", x->ops->name, dst);
	} else if (rc == 0) {
		x->files++;
		x->bytes += (unsigned long long)sb.st_size;
		goto out;
	}
	(void)unlink(tmp);
out:
	free(src);
	free(tmp);
	free(dst);
	return rc;
}

/* One line of a listing; see cloud.h. */
int
vg_cloud_ls_line(const char *line, char *type, unsigned long long *size,
    const char **rel)
{
	char *end;

	if (strchr("fdlo", line[0]) == NULL || line[0] == '\0' ||
	    line[1] != ' ' || line[2] < '0' || line[2] > '9')
		return -1;
	errno = 0;
	*size = strtoull(line + 2, &end, 10);
	if (errno != 0 || *end != ' ' || !outs_rel_ok(end + 1))
		return -1;
	*type = line[0];
	*rel = end + 1;
	return 0;
}

/* One line of the listing, "TYPE SIZE PATH". */
static int
outs_entry(struct outs *x, const char *line, struct vg_err *e)
{
	const char *rel;
	char type;
	unsigned long long size;

	if (vg_cloud_ls_line(line, &type, &size, &rel) != 0 ||
	    !outs_wanted(x->o, rel))
		return 0;
	if (outs_reserved(rel)) {
		outs_leave(x, rel, "a name of vigil's in the task directory");
		return 0;
	}
	switch (type) {
	case 'f':
		return outs_file(x, rel, size, e);
	case 'd':
		return 0;
	case 'l':
		outs_leave(x, rel, "a symbolic link (left in the sandbox)");
		return 0;
	default:
		outs_leave(x, rel, "not a regular file");
		return 0;
	}
}

/* Reads the whole of fd (from its start) into out, at most max bytes. */
static int
read_back(int fd, size_t max, struct vg_buf *out, struct vg_err *e)
{
	char buf[8192];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return vg_err_errno(e, "outputs: listing");
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vg_err_errno(e, "outputs: listing");
		if (out->len + (size_t)n > max)
			return vg_err_set(e, VG_ELIMIT, "outputs: the listing "
			    "of the sandbox is over %zu bytes", max);
		vg_buf_add(out, buf, (size_t)n);
	}
	return 0;
}

/* The listing by a command in the sandbox, through exec and wait. */
static int
outs_ls_command(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    struct vg_buf *out, struct vg_err *e)
{
	struct vg_buf err = VG_BUF_INIT;
	long code = -1;
	int rc, i;

	for (i = 1; i <= 2; i++)
		if ((t->out.fd[i] = memfd_create("vigil-outputs",
		    MFD_CLOEXEC)) < 0)
			return vg_err_errno(e, "%s: outputs: memfd_create",
			    ops->name);
	rc = ops->exec != NULL ? ops->exec(t, e) : 0;
	if (rc == 0)
		rc = ops->wait(t, vg_mono() + OUTPUTS_LS_TIMEOUT, &code, e);
	if (rc == 0 && code != 0) {
		(void)read_back(t->out.fd[2], 4096, &err, e);
		rc = vg_err_set(e, VG_EBACKEND, "%s: listing the outputs in "
		    "the sandbox failed (exit %ld)%s%.300s", ops->name, code,
		    err.len > 0 ? ": " : "", vg_buf_str(&err));
	}
	if (rc == 0)
		rc = read_back(t->out.fd[1], OUTPUTS_LS_MAX, out, e);
	vg_buf_release(&err);
	return rc;
}

/* Brings the outputs of t's attempt back; see cloud.h. */
int
vg_cloud_outputs(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    enum vg_state st, struct vg_err *e)
{
	const struct vg_outputs *o = &t->a->m->outputs;
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf ls = VG_BUF_INIT;
	struct vg_cloud_task lt;
	struct vg_attempt la;
	struct vg_task tk;
	struct outs x;
	char *path, *line, *nl;
	int rc;

	if (t->a->task_dir == NULL || t->a->task == NULL)
		return 0;
	path = vg_path_join(t->a->task_dir, VG_OUTPUTS_LEFT);
	(void)unlink(path);
	if (o->paths.n == 0 || ops->get_file == NULL || t->sandbox == NULL ||
	    (o->when == VG_OUT_SUCCESS && st != VG_ST_SUCCEEDED) ||
	    (o->when == VG_OUT_FAILURE && st == VG_ST_SUCCEEDED)) {
		free(path);
		return 0;
	}
	/* The listing is a command of its own in the same sandbox (and,
	 * where the provider has them, in a session of its own: kill may
	 * have ended the attempt's). */
	la = *t->a;
	tk = *t->a->task;
	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, OUTPUTS_LS);
	tk.command.is_argv = 1;
	tk.command.argv = argv;
	la.task = &tk;
	la.timeout = OUTPUTS_LS_TIMEOUT;
	memset(&lt, 0, sizeof(lt));
	lt.a = &la;
	lt.out.fd[0] = lt.out.fd[1] = lt.out.fd[2] = -1;
	lt.sandbox = vg_xstrdup(t->sandbox);
	lt.session = t->session != NULL ? vg_xstrdup(t->session) : NULL;
	memset(&x, 0, sizeof(x));
	x.ops = ops;
	x.t = &lt;
	x.o = o;
	x.task_dir = t->a->task_dir;
	x.max_bytes = o->max_bytes > 0 ? o->max_bytes : VG_OUTPUTS_MAX_BYTES;
	x.max_files = o->max_files > 0 ? o->max_files : VG_OUTPUTS_MAX_FILES;
	/* A provider with its own open (modal) opens its own way. */
	rc = ops->open != NULL ? ops->open(&lt.c, ops, t->c.conf, t->c.stop,
	    e) : vg_cloud_open_like(&lt.c, &t->c, t->c.endpoint, e);
	if (rc != 0 ||
	    (ops->attach != NULL && (rc = ops->attach(&lt, e)) != 0))
		goto out;
	rc = ops->list_tree != NULL ? ops->list_tree(&lt, &ls, e) :
	    outs_ls_command(ops, &lt, &ls, e);
	if (rc != 0)
		goto out;
	/* The first line is the working directory. */
	line = ls.data;
	if (line == NULL || (nl = strchr(line, '\n')) == NULL ||
	    line[0] != '/') {
		rc = vg_err_set(e, VG_EBACKEND, "%s: outputs: the listing "
		    "of the sandbox has no working directory", ops->name);
		goto out;
	}
	*nl = '\0';
	x.root = line;
	for (line = nl + 1; rc == 0 && *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			break;
		*nl = '\0';
		rc = outs_entry(&x, line, e);
	}
	if (rc == 0 && x.left.len > 0)
		rc = vg_write_file_atomic(path, x.left.data, x.left.len, 0600,
		    e);
out:
	tk.command.argv = (struct vg_strv)VG_STRV_INIT;
	vg_strv_release(&argv);
	task_release(&lt);
	vg_buf_release(&ls);
	vg_buf_release(&x.left);
	free(path);
	return rc;
}

/*
 * Brings the outputs back after a command that ended by itself (succeeded
 * or failed) or was stopped at its timeout (a failed attempt too); after
 * a timeout the reading has VG_CLOUD_OUTPUTS_LATE seconds (SIGALRM), and
 * a cancel stops it.  After a cancel nothing is read: the user asked the
 * task to stop.  A failure is noted in r, the outcome stays.
 */
static void
cloud_outputs(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    struct vg_result *r)
{
	char msg[VG_ERR_MSG_MAX + 96];
	struct sigaction sa, old;
	struct vg_err le;
	int late, rc;

	if (cloud_stop || (r->state != VG_ST_SUCCEEDED &&
	    r->state != VG_ST_FAILED && r->state != VG_ST_TIMEOUT))
		return;
	if ((late = r->state == VG_ST_TIMEOUT)) {
		/* run_command took the stop away for the kill. */
		t->c.stop = &cloud_stop;
		if (t->have_tb)
			t->tb.stop = &cloud_stop;
		cloud_late = 0;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = cloud_on_late;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, &old);
		alarm(VG_CLOUD_OUTPUTS_LATE);
	}
	vg_err_init(&le);
	rc = vg_cloud_outputs(ops, t, r->state, &le);
	if (late) {
		alarm(0);
		sigaction(SIGALRM, &old, NULL);
		t->c.stop = t->tb.stop = NULL;
	}
	if (rc == 0)
		return;
	if (late && cloud_late)
		snprintf(msg, sizeof(msg), "(outputs not brought back: not "
		    "done %d s after the timeout: %s)", VG_CLOUD_OUTPUTS_LATE,
		    le.msg);
	else
		snprintf(msg, sizeof(msg), "(outputs not brought back: %s)",
		    le.msg);
	reason_add(r, msg);
}

/* The slack of a cloud attempt's timeout; see cloud.h. */
double
vg_cloud_timeout_slack(const struct vg_cloud_ops *ops,
    const struct vg_attempt *a)
{
	const struct vg_outputs *o;

	if (a->m == NULL || ops->get_file == NULL)
		return 0;
	o = &a->m->outputs;
	if (o->paths.n == 0 || o->when == VG_OUT_SUCCESS)
		return 0;
	return a->kill_grace + VG_CLOUD_OUTPUTS_LATE + VG_CLOUD_CALL_TIMEOUT;
}

/* Runs one attempt in a new sandbox; see cloud.h. */
int
vg_cloud_run(const struct vg_cloud_ops *ops, struct vg_attempt *a,
    struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct vg_cloud_task t;
	struct vg_err le;
	const struct vg_cloud_conf *conf = vg_cloud_conf_of(ops, a->m);
	double deadline = 0;
	int rc;

	task_begin(ops, &t, a, r);
	/* The whole attempt counts, sandbox creation included, as it does
	 * for the scheduler that started this monitor. */
	if (a->timeout > 0)
		deadline = vg_mono() + a->timeout;

	cloud_signals(&old_term, &old_int);
	if ((rc = vg_cloud_out_open(&t.out, a->task_dir, e)) != 0 ||
	    (rc = vg_cloud_open(&t.c, ops, conf, &cloud_stop, e)) != 0) {
		vg_result_fail(r, e);
		goto out;
	}
	vg_err_init(&le);
	if ((rc = ops->create(&t, &le)) != 0) {
		if (rc == VG_ECANCELED && cloud_stop) {
			r->state = VG_ST_CANCELLED;
			snprintf(r->reason, sizeof(r->reason), "cancelled "
			    "while the sandbox was being created");
			rc = 0;
		} else {
			vg_err_set(e, rc, "%s", le.msg);
			vg_result_fail(r, e);
		}
		goto destroy;
	}
	if (t.sandbox != NULL)
		snprintf(r->node, sizeof(r->node), "%s:%s", ops->name,
		    t.sandbox);
	rc = run_command(ops, &t, deadline, r, e);
	if (rc == 0)
		cloud_outputs(ops, &t, r);
destroy:
	cloud_finish(ops, &t, conf, r);
out:
	task_release(&t);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
	return rc;
}

/*
 * Deletes vigil's sandboxes: every one of run_id, or (run_id NULL) those
 * whose owner label names a process of this host that is gone.  Without
 * a token there is nothing vigil could have created: no error.
 */
int
vg_cloud_reap(const struct vg_cloud_ops *ops, const struct vg_manifest *m,
    const char *run_id, int task, struct vg_buf *report, struct vg_err *e)
{
	const struct vg_cloud_conf *conf = vg_cloud_conf_of(ops, m);
	struct vg_cloud_boxes boxes = { 0 };
	struct vg_cloud c;
	struct vg_cloud_box *b;
	size_t i;
	int rc;

	if (env_value(token_var(ops, conf)) == NULL ||
	    (ops->team_env != NULL && env_value(ops->team_env) == NULL) ||
	    (ops->project_env != NULL && env_value(ops->project_env) == NULL))
		return 0;
	if ((rc = vg_cloud_open(&c, ops, conf, NULL, e)) != 0)
		goto out;
	if ((rc = cloud_list(&c, run_id, &boxes, e)) != 0)
		goto out;
	for (i = 0; i < boxes.n; i++) {
		b = &boxes.v[i];
		if (run_id != NULL ? b->run == NULL ||
		    strcmp(b->run, run_id) != 0 :
		    !vg_backend_owner_dead(b->owner))
			continue;
		if (run_id != NULL && task >= 0 && (b->task == NULL ||
		    atoi(b->task) != task))
			continue;
		if ((rc = ops->destroy(&c, b->id, e)) != 0)
			goto out;
		if (report != NULL)
			vg_buf_printf(report, "%s: removed sandbox %s (run %s, "
			    "task %s)\n", ops->name, b->id, b->run, b->task);
	}
out:
	vg_cloud_boxes_release(&boxes);
	vg_cloud_close(&c);
	return rc;
}

/* Follows the recorded command of t (t->sandbox, session, cmd read) to
 * its end; VG_ENOENT when the provider finds it gone. */
static int
cloud_follow(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
    double deadline, struct vg_result *r, struct vg_err *e)
{
	const struct vg_cloud_conf *conf = vg_cloud_conf_of(ops, t->a->m);
	struct sigaction old_term, old_int;
	struct vg_err le;
	int rc;

	cloud_signals(&old_term, &old_int);
	t->attached = 1;
	vg_err_init(&le);
	if ((rc = vg_cloud_out_reopen(&t->out, t->a->task_dir, e)) != 0 ||
	    (rc = vg_cloud_open(&t->c, ops, conf, &cloud_stop, e)) != 0)
		vg_result_fail(r, e);
	else if ((rc = ops->reattach(t, &le)) != 0) {
		vg_err_set(e, rc, "%s", le.msg);
		if (rc != VG_ENOENT)
			vg_result_fail(r, e);
	} else {
		snprintf(r->node, sizeof(r->node), "%s:%s", ops->name,
		    t->sandbox);
		rc = run_command(ops, t, deadline, r, e);
		if (rc == 0)
			cloud_outputs(ops, t, r);
		cloud_finish(ops, t, conf, r);
	}
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	return rc;
}

/*
 * Reattach (see cloud.h): with the record the monitor left and a
 * provider that can reattach, the command is followed to its end (the log
 * read from its start, what the files hold skipped) and the sandbox
 * deleted as in run; otherwise the sandbox of the task, found by its
 * tags, is deleted and VG_ENOENT says the task runs again.
 */
int
vg_cloud_reattach(const struct vg_cloud_ops *ops, struct vg_attempt *a,
    struct vg_result *r, struct vg_err *e)
{
	struct vg_buf said = VG_BUF_INIT;
	struct vg_cloud_task t;
	double deadline = a->timeout > 0 ? vg_mono() + a->timeout : 0;
	int rc = VG_ENOENT;

	task_begin(ops, &t, a, r);
	if (ops->reattach != NULL && a->task_dir != NULL &&
	    record_read(&t) == 0)
		rc = cloud_follow(ops, &t, deadline, r, e);
	task_release(&t);
	if (rc != VG_ENOENT) {
		if (r->ended == 0)
			r->ended = vg_now();
		return rc;
	}
	rc = vg_cloud_reap(ops, a->m, a->run_id, a->task != NULL ?
	    a->task->index : 0, &said, e);
	if (rc == 0)
		rc = vg_err_set(e, VG_ENOENT, "%s: %s", ops->name,
		    said.len > 0 ? "the attempt's sandbox was deleted (its "
		    "command could not be followed)" : "no sandbox of the "
		    "attempt was left");
	vg_buf_release(&said);
	return rc;
}

/* For `vigil doctor`: is there a token, does the API answer to it? */
void
vg_cloud_probe(const struct vg_cloud_ops *ops, struct vg_buf *out)
{
	struct vg_cloud c;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_cloud_open(&c, ops, NULL, NULL, &e) != 0 ||
	    ops->ping(&c, &e) != 0)
		vg_buf_printf(out, "%s: missing (%s)\n", ops->name, e.msg);
	else
		vg_buf_printf(out, "%s: ok (%s, token from %s)\n", ops->name,
		    c.endpoint, c.token_env);
	vg_cloud_close(&c);
}

struct gpu_ask {
	int	 gpus;		/* some task asks for GPUs */
	char	 type[64];	/* the first such task's gpu_type */
};

/* Notes whether a task asks for GPUs, and of what type. */
static int
gpu_ask_fn(long index, const struct vg_resources *r, void *arg)
{
	struct gpu_ask *gw = arg;

	(void)index;
	if (r->gpus <= 0)
		return 0;
	gw->gpus = 1;
	if (r->gpu_type != NULL && gw->type[0] == '\0')
		vg_strlcpy(gw->type, r->gpu_type, sizeof(gw->type));
	return 0;
}

/* Says when the provider's credentials are not here, by presence. */
void
vg_cloud_host_check(const struct vg_cloud_ops *ops,
    const struct vg_manifest *m, struct vg_strv *why)
{
	const struct vg_cloud_conf *cc = vg_manifest_conf(m, ops->section);
	struct vg_err e;

	vg_err_init(&e);
	if (ops->open == NULL && vg_cloud_creds(ops, cc, NULL, &e) != 0)
		vg_strv_push(why, e.msg);
}

/* Checks the provider's section beyond its schema. */
int
vg_cloud_validate(const struct vg_cloud_ops *ops, const struct vg_manifest *m,
    struct vg_diag *d)
{
	const struct vg_cloud_conf *cc = vg_manifest_conf(m, ops->section);
	struct gpu_ask gw;
	struct vg_loc loc;
	int bad = 0;

	if (cc->token_env != NULL && !is_name(cc->token_env,
	    strlen(cc->token_env))) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "%s.token_env",
		    ops->name), "%s.token_env: '%s' is not an environment "
		    "variable name (letters, digits and '_', not starting "
		    "with a digit)", ops->name, cc->token_env);
		bad = 1;
	}
	if (cc->endpoint != NULL && strncmp(cc->endpoint, "https://", 8) != 0
	    && strncmp(cc->endpoint, "http://", 7) != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "%s.endpoint",
		    ops->name), "%s.endpoint: '%s' is not an http:// or "
		    "https:// URL", ops->name, cc->endpoint);
		bad = 1;
	}
	if (ops->needs_image && (m->image == NULL || *m->image == '\0') &&
	    (cc->snapshot == NULL || *cc->snapshot == '\0')) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "backend"),
		    "backend %s needs 'image:' or "
		    "'%s.snapshot:'", ops->name, ops->name);
		bad = 1;
	}
	if (m->workdir != NULL && m->workdir[0] != '/') {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "workdir"),
		    "workdir: '%s' must be an absolute path inside the "
		    "sandbox", m->workdir);
		bad = 1;
	}
	memset(&gw, 0, sizeof(gw));
	vg_expand_resources(m, gpu_ask_fn, &gw);
	if (gw.gpus && ops->gpus == 0) {
		vg_diag_add(d, &loc, "resources.gpus: backend %s cannot give "
		    "a task GPUs (its API has no GPU field); use local, "
		    "docker, apptainer, slurm or a cloud backend with GPUs",
		    ops->name);
		bad = 1;
	} else if (gw.type[0] != '\0' && ops->gpus != VG_CLOUD_GPU_TYPE) {
		vg_diag_add(d, &loc, "resources.gpu_type: backend %s takes a "
		    "GPU count but no GPU type ('%s'); leave gpu_type out",
		    ops->name, gw.type);
		bad = 1;
	}
	return bad ? VG_EINVAL : 0;
}

int
vg_cloud_pool(const struct vg_manifest *m, struct vg_pool *p,
    struct vg_err *e)
{
	(void)m;
	(void)e;
	memset(p, 0, sizeof(*p));
	p->unbounded = 1;
	vg_strlcpy(p->gpu_from, "the provider's machines", sizeof(p->gpu_from));
	return 0;
}

/* ---- the rows of the providers' sections ---- */

const struct vg_section vg_cloud_schema = {
	.name = "cloud",
	.fields = (const struct vg_field[]){
		VG_CLOUD_ROWS(0),
		{ .key = NULL },
	},
};

/* ---- sessions ---- */

/* Where a session's state lives in its sandbox. */
#define SESSION_ROOT		"~/.vigil-session"
/* What the sandbox runs between commands, where create starts one. */
#define SESSION_IDLE \
	"trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"
/* Longest --stdin a cloud command takes (it travels as an argument). */
#define SESSION_STDIN_MAX	(256u << 10)
/* How long the tree kill of a timed-out command may take. */
#define SESSION_KILL_TIMEOUT	30.0

/* An attempt for session s: job is the task index, step the attempt
 * (1 the command, 2 and 4 its tree kills, 3 its stdin), argv the
 * command. */
static void
session_attempt(const struct vg_session *s, struct vg_attempt *a,
    struct vg_task *t, int job, int step, const struct vg_strv *argv,
    double timeout)
{
	memset(a, 0, sizeof(*a));
	memset(t, 0, sizeof(*t));
	t->index = job;
	t->env = s->m->env;
	t->command.is_argv = 1;
	t->command.argv = *argv;
	a->m = s->m;
	a->task = t;
	a->run_id = s->id;
	a->attempt = step;
	a->res = s->m->resources;
	a->timeout = timeout;
	a->kill_grace = s->m->kill_grace;
	a->pidfd = -1;
}

int
vg_cloud_session_open(const struct vg_cloud_ops *ops, struct vg_session *s,
    struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_cloud_task t;
	struct vg_attempt a;
	struct vg_task tk;
	struct vg_err le;
	char *owner = vg_xasprintf("session:%s", s->id);
	int rc;

	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, SESSION_IDLE);
	/* The sandbox's own lifetime: a day, or the session's max age. */
	session_attempt(s, &a, &tk, 0, 1, &argv, 86400);
	memset(&t, 0, sizeof(t));
	t.a = &a;
	t.out.fd[0] = t.out.fd[1] = t.out.fd[2] = -1;
	if ((rc = vg_cloud_open(&t.c, ops, vg_cloud_conf_of(ops, s->m), NULL,
	    e)) != 0)
		goto out;
	cloud_owner = owner;
	rc = ops->create(&t, e);
	cloud_owner = NULL;
	if (rc != 0) {
		vg_err_init(&le);
		if (t.sandbox != NULL)
			(void)ops->destroy(&t.c, t.sandbox, &le);
		goto out;
	}
	snprintf(s->handle, sizeof(s->handle), "%s%s%s", t.sandbox,
	    t.session != NULL ? " " : "", t.session != NULL ? t.session : "");
	vg_strlcpy(s->root, SESSION_ROOT, sizeof(s->root));
out:
	task_release(&t);
	vg_strv_release(&argv);
	free(owner);
	return rc;
}

/* Readies t for one command of s: connection, sandbox, attach. */
static int
session_task(const struct vg_cloud_ops *ops, const struct vg_session *s,
    struct vg_cloud_task *t, struct vg_attempt *a,
    const volatile sig_atomic_t *stop, struct vg_err *e)
{
	const char *sp = strchr(s->handle, ' ');
	int rc;

	memset(t, 0, sizeof(*t));
	t->a = a;
	t->out.fd[0] = t->out.fd[1] = t->out.fd[2] = -1;
	if (s->handle[0] == '\0')
		return vg_err_set(e, VG_ENOENT, "%s: session '%s' has no "
		    "sandbox", ops->name, s->id);
	t->sandbox = sp != NULL ? vg_xstrndup(s->handle,
	    (size_t)(sp - s->handle)) : vg_xstrdup(s->handle);
	if (sp != NULL)
		t->session = vg_xstrdup(sp + 1);
	if ((rc = vg_cloud_open(&t->c, ops, vg_cloud_conf_of(ops, s->m), stop,
	    e)) != 0)
		return rc;
	return ops->attach != NULL ? ops->attach(t, e) : 0;
}

/* Runs argv as step of job in s's sandbox to its end, output dropped;
 * for the tree kill and the stdin upload.  Returns its exit code or a
 * negative vg_rc. */
static int
session_side(const struct vg_cloud_ops *ops, const struct vg_session *s,
    int job, int step, const struct vg_strv *argv, struct vg_err *e)
{
	struct vg_cloud_task t;
	struct vg_attempt a;
	struct vg_task tk;
	long code = -1;
	int rc;

	session_attempt(s, &a, &tk, job, step, argv, SESSION_KILL_TIMEOUT);
	if ((rc = session_task(ops, s, &t, &a, NULL, e)) == 0 &&
	    (rc = ops->exec != NULL ? ops->exec(&t, e) : 0) == 0)
		rc = ops->wait(&t, vg_mono() + SESSION_KILL_TIMEOUT, &code, e);
	task_release(&t);
	return rc != 0 ? rc : (int)code;
}

/* Puts the command's stdin into its directory in the sandbox. */
static int
session_stdin(const struct vg_cloud_ops *ops, const struct vg_session *s,
    const struct vg_session_cmd *c, int job, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf in = VG_BUF_INIT;
	int rc;

	if ((rc = vg_read_file(c->stdin_path, SESSION_STDIN_MAX, &in, e)) != 0)
		goto out;
	if (in.len > 0 && memchr(in.data, '\0', in.len) != NULL) {
		rc = vg_err_set(e, VG_EINVAL, "%s: --stdin with NUL bytes "
		    "cannot reach a cloud sandbox", ops->name);
		goto out;
	}
	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, "d=$HOME/.vigil-session/cmds/$1; mkdir -p \"$d\" "
	    "&& printf %s \"$2\" >\"$d/stdin\"");
	vg_strv_push(&argv, "sh");
	vg_strv_push(&argv, c->job);
	vg_strv_push(&argv, in.data != NULL ? in.data : "");
	rc = session_side(ops, s, job, 3, &argv, e);
	if (rc > 0)
		rc = vg_err_set(e, VG_EBACKEND, "%s: writing the stdin of job "
		    "%s failed (exit %d)", ops->name, c->job, rc);
out:
	vg_strv_release(&argv);
	vg_buf_release(&in);
	return rc;
}

/* Kills the tree of job c with sig by one more command. */
static void
session_kill_tree(const struct vg_cloud_ops *ops, const struct vg_session *s,
    const struct vg_session_cmd *c, int job, int sig)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_err le;
	char *script = vg_session_kill_script(s->root, c->job, sig);

	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, script);
	vg_err_init(&le);
	/* Steps 2 and 4: each its own provider command. */
	(void)session_side(ops, s, job, sig == SIGKILL ? 4 : 2, &argv, &le);
	vg_strv_release(&argv);
	free(script);
}

int
vg_cloud_session_exec(const struct vg_cloud_ops *ops,
    const struct vg_session *s, const struct vg_session_cmd *c,
    struct vg_result *r, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_cloud_task t;
	struct vg_attempt a;
	struct vg_task tk;
	struct vg_err le;
	char *stdin_in = NULL;
	long code = -1;
	int rc, job = atoi(c->job), sig = 0;

	memset(r, 0, sizeof(*r));
	memset(&t, 0, sizeof(t));
	t.out.fd[1] = t.out.fd[2] = -1;
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	r->started = vg_now();
	snprintf(r->node, sizeof(r->node), "%s", ops->name);
	if (c->stdin_path != NULL) {
		if ((rc = session_stdin(ops, s, c, job, e)) != 0)
			goto out;
		stdin_in = vg_xasprintf("%s/cmds/%s/stdin", s->root, c->job);
	}
	/* The wrapper reads stdin from the sandbox's own path. */
	vg_session_script(s->root, c, stdin_in, NULL, &argv);
	/* The provider's own limit, where it takes one, is a backstop a
	 * little after ours, so that ours decides. */
	session_attempt(s, &a, &tk, job, 1, &argv, c->timeout > 0 ?
	    c->timeout + 10 : 0);
	if ((rc = session_task(ops, s, &t, &a, c->stop, e)) != 0 ||
	    (rc = vg_cloud_out_open(&t.out, c->dir, e)) != 0)
		goto out;
	t.out.tee = c;
	vg_err_init(&le);
	rc = ops->exec != NULL ? ops->exec(&t, &le) : 0;
	if (rc == 0)
		rc = ops->wait(&t, c->timeout > 0 ? vg_mono() + c->timeout : 0,
		    &code, &le);
	if (rc == VG_ETIMEOUT || (rc == VG_ECANCELED && c->stop != NULL &&
	    *c->stop)) {
		/* The command's tree first, then the provider's own stop of
		 * the command: the sandbox stays. */
		t.c.stop = t.tb.stop = NULL;
		session_kill_tree(ops, s, c, job, SIGTERM);
		ops->kill(&t, c->kill_grace, &sig);
		session_kill_tree(ops, s, c, job, SIGKILL);
		r->state = rc == VG_ETIMEOUT ? VG_ST_TIMEOUT : VG_ST_CANCELLED;
		r->signal = sig;
		snprintf(r->reason, sizeof(r->reason), "%s; its processes "
		    "were sent %s", rc == VG_ETIMEOUT ? "timed out" :
		    "stopped", sig == SIGKILL ? "SIGKILL" : "SIGTERM");
		rc = 0;
	} else if (rc != 0) {
		vg_err_set(e, rc, "%s", le.msg);
	} else {
		result_exit(r, code);
	}
out:
	r->ended = vg_now();
	task_release(&t);
	tk.command.argv = (struct vg_strv)VG_STRV_INIT;
	vg_strv_release(&argv);
	free(stdin_in);
	return rc;
}

int
vg_cloud_session_close(const struct vg_cloud_ops *ops,
    const struct vg_session *s, struct vg_err *e)
{
	struct vg_cloud_boxes boxes = { 0 };
	struct vg_cloud c;
	const char *sp = strchr(s->handle, ' ');
	char *id, *owner = vg_xasprintf("session:%s", s->id);
	size_t i;
	int rc;

	if ((rc = vg_cloud_open(&c, ops, vg_cloud_conf_of(ops, s->m), NULL,
	    e)) != 0)
		goto out;
	if (s->handle[0] != '\0') {
		id = sp != NULL ? vg_xstrndup(s->handle,
		    (size_t)(sp - s->handle)) : vg_xstrdup(s->handle);
		rc = ops->destroy(&c, id, e);
		free(id);
		if (rc == VG_ENOENT)
			rc = 0;
		goto out;
	}
	/* A start killed before the handle was recorded: by its label. */
	if (ops->list_path == NULL || (rc = cloud_list(&c, s->id, &boxes,
	    e)) != 0)
		goto out;
	for (i = 0; i < boxes.n && rc == 0; i++)
		if (strcmp(boxes.v[i].owner, owner) == 0)
			rc = ops->destroy(&c, boxes.v[i].id, e);
out:
	vg_cloud_boxes_release(&boxes);
	vg_cloud_close(&c);
	free(owner);
	return rc;
}

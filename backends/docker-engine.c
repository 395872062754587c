/*
 * docker-engine.c - the Engine API transport of the docker backend: the
 * API version negotiation (GET /version), the engine's endpoint, the
 * connection over its unix socket with libcurl, one call with retries of
 * transient failures and the reading of its JSON reply, and the image:
 * whether it is there (GET /images/NAME/json) and its pull (POST
 * /images/create, its JSON-lines progress read for the last error).
 * What the calls mean is left to the callers: docker.c (run, reattach,
 * reap), docker-session.c and docker-access.c (named volumes).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/http.h"
#include "common/json.h"
#include "runner/policy/host-access.h"
#include "backends/docker.h"
#include "backends/docker-int.h"

#define DOCKER_DEFAULT_HOST	"unix:///var/run/docker.sock"
#define DOCKER_PULL_TIMEOUT	3600.0
/* Longest progress line of a pull we look at. */
#define DOCKER_PULL_LINE_MAX	(64u << 10)

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

/* Parses "MAJOR.MINOR" into one comparable number; -1 when malformed. */
static long
api_num(const char *v)
{
	char *end;
	long major, minor;

	if (v == NULL || *v < '0' || *v > '9')
		return -1;
	major = strtol(v, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	minor = strtol(end + 1, &end, 10);
	if (*end != '\0' || major > 1000 || minor > 1000)
		return -1;
	return major * 1000 + minor;
}

/* Negotiates the API version; see docker.h. */
int
vg_docker_api_version(const char *server, const char *server_min,
    char out[16], struct vg_err *e)
{
	long s = api_num(server), ours = api_num(VG_DOCKER_API_MAX);
	long lo = api_num(VG_DOCKER_API_MIN), smin, v;

	out[0] = '\0';
	if (s < 0)
		return vg_err_set(e, VG_EBACKEND, "docker engine reports API "
		    "version '%s', expected MAJOR.MINOR",
		    server ? server : "(none)");
	v = s < ours ? s : ours;
	if (v < lo)
		return vg_err_set(e, VG_EUNSUPPORTED, "docker engine API %s is "
		    "older than %s, the oldest vigil supports", server,
		    VG_DOCKER_API_MIN);
	if (server_min != NULL && (smin = api_num(server_min)) > v)
		return vg_err_set(e, VG_EUNSUPPORTED, "docker engine needs API "
		    ">= %s, vigil speaks up to %s", server_min,
		    VG_DOCKER_API_MAX);
	snprintf(out, 16, "%u.%u", (unsigned)(v / 1000 % 1000),
	    (unsigned)(v % 1000));
	return 0;
}

/* ------------------------------------------------------------------ */
/* The engine                                                          */
/* ------------------------------------------------------------------ */

/* The engine endpoint: docker.host, $DOCKER_HOST, or the default. */
const char *
vg_docker_endpoint(const struct vg_manifest *m)
{
	const char *env = getenv("DOCKER_HOST");

	if (m != NULL && vg_docker_of(m)->host != NULL && *vg_docker_of(m)->host)
		return vg_docker_of(m)->host;
	if (env != NULL && *env)
		return env;
	return DOCKER_DEFAULT_HOST;
}

/* The "message" of an error reply, or its status. */
void
vg_docker_reply_message(const struct vg_http_resp *resp, char *out, size_t size)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };
	struct vg_json_doc *doc;
	const char *msg;

	snprintf(out, size, "HTTP %ld", resp->status);
	if (vg_json_parse(resp->body.data, resp->body.len, &lim, &doc,
	    NULL) != 0)
		return;
	msg = vg_json_get_str(vg_json_root(doc), "message", NULL);
	if (msg != NULL)
		snprintf(out, size, "%s (HTTP %ld)", msg, resp->status);
	vg_json_free(doc);
}

/* Tries of one call that fails transiently (connection refused or
 * reset, HTTP 429 or 5xx), and the first pause between them (doubling). */
#define DOCKER_CALL_TRIES	4
#define DOCKER_CALL_BACKOFF	0.25

/*
 * One API call: method on prefix + path, body optional.  On success the
 * reply is in c->resp.  A status of 400 or more is an error naming what
 * (e.g. "creating the container"), except the statuses listed in ok.
 * Transient failures are tried again in place with backoff (every call
 * vigil makes may be repeated: create is by name, start of a started
 * container answers 304); when they persist the error is VG_EAGAIN
 * (5xx, 429) or VG_EIO (connection), both transient (docs/backends/
 * docker.md); 404 is VG_ENOENT and any other status VG_EBACKEND.
 */
int
vg_docker_call(struct vg_docker_conn *c, const char *method, const char *path,
    const struct vg_buf *body, double timeout, const long *ok,
    const char *what, struct vg_err *e)
{
	struct vg_http_req req = {
		.method = method,
		.body = body ? vg_buf_str(body) : NULL,
		.body_len = body ? body->len : 0,
		.timeout = timeout,
		.stop = c->stop,
	};
	struct timespec ts;
	char *full, msg[512], more[40] = "";
	double pause = DOCKER_CALL_BACKOFF;
	const long *k;
	long st;
	int r, n;

	full = vg_xasprintf("%s%s", c->prefix, path);
	req.path = full;
	for (n = 1;; n++) {
		r = vg_http_do(c->h, &req, &c->resp, e);
		st = r == 0 ? c->resp.status : 0;
		for (k = ok; st >= 400 && k != NULL && *k != 0; k++)
			if (st == *k)
				st = 0;
		if (n >= DOCKER_CALL_TRIES || (c->stop != NULL && *c->stop) ||
		    !(r == VG_EIO || st == 429 || st >= 500))
			break;
		ts.tv_sec = (time_t)pause;
		ts.tv_nsec = (long)((pause - (double)ts.tv_sec) * 1e9);
		(void)nanosleep(&ts, NULL);
		pause *= 2;
		if (e != NULL)
			vg_err_init(e);
	}
	free(full);
	if (r != 0) {
		vg_err_prefix(e, "docker: %s: ", what);
		if (e != NULL && n > 1)
			snprintf(e->msg + strlen(e->msg), sizeof(e->msg) -
			    strlen(e->msg), " (gave up after %d tries)", n);
		return r;
	}
	if (c->resp.status < 400)
		return 0;
	for (; ok != NULL && *ok != 0; ok++)
		if (c->resp.status == *ok)
			return 0;
	vg_docker_reply_message(&c->resp, msg, sizeof(msg));
	st = c->resp.status;
	if (n > 1)
		snprintf(more, sizeof(more), " (gave up after %d tries)", n);
	return vg_err_set(e, st == 404 ? VG_ENOENT : st == 429 || st >= 500 ?
	    VG_EAGAIN : VG_EBACKEND, "docker: %s: %s%s", what, msg, more);
}

/* Parses the last reply as JSON. */
int
vg_docker_reply_json(struct vg_docker_conn *c, struct vg_json_doc **docp,
    const char *what, struct vg_err *e)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };

	if (vg_json_parse(c->resp.body.data, c->resp.body.len, &lim, docp,
	    e) != 0)
		return vg_err_prefix(e, "docker: %s: ", what);
	return 0;
}

/* Closes c. */
void
vg_docker_close(struct vg_docker_conn *c)
{
	vg_http_free(c->h);
	vg_http_resp_release(&c->resp);
	memset(c, 0, sizeof(*c));
}

/* Connects to the engine at endpoint and negotiates the API version. */
int
vg_docker_open(struct vg_docker_conn *c, const char *endpoint,
    const volatile sig_atomic_t *stop, struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root;
	char ver[16], hdr[32];
	int r;

	memset(c, 0, sizeof(*c));
	c->stop = stop;
	if ((r = vg_http_open(endpoint, &c->h, e)) != 0)
		return vg_err_prefix(e, "docker: ");
	/* GET /_ping names the version in a header and answers at once;
	 * GET /version (podman runs conmon and runc to fill it, 1-3 s on a
	 * busy host) only when the header is missing. */
	if ((r = vg_docker_call(c, "GET", "/_ping", NULL, DOCKER_CALL_TIMEOUT,
	    NULL, "connecting to the engine", e)) != 0)
		goto out;
	c->podman = vg_http_resp_header(&c->resp, "Libpod-Api-Version", ver,
	    sizeof(ver));
	if (vg_http_resp_header(&c->resp, "Api-Version", hdr, sizeof(hdr))) {
		if ((r = vg_docker_api_version(hdr, NULL, ver, e)) != 0)
			goto out;
	} else {
		if ((r = vg_docker_call(c, "GET", "/version", NULL,
		    DOCKER_CALL_TIMEOUT, NULL, "asking the engine for its "
		    "version", e)) != 0)
			goto out;
		if ((r = vg_docker_reply_json(c, &doc, "GET /version", e)) != 0)
			goto out;
		root = vg_json_root(doc);
		if ((r = vg_docker_api_version(vg_json_get_str(root,
		    "ApiVersion", NULL), vg_json_get_str(root, "MinAPIVersion",
		    NULL), ver, e)) != 0)
			goto out;
	}
	snprintf(c->prefix, sizeof(c->prefix), "/v%s", ver);
out:
	vg_json_free(doc);
	if (r != 0)
		vg_docker_close(c);
	return r;
}

/*
 * Asks the engine about each named volume (GET /volumes/NAME) and
 * appends a finding for each that is host access, or that could not be
 * told: an error reply or one that is not the expected JSON fails
 * closed.  A missing volume (404) is created empty, with the default
 * driver, when the container is.  Returns the number of findings, or a
 * negative vg_rc when the engine could not be reached at all.
 */
struct pull_state {
	struct vg_buf	line;
	char		error[512];
	int		skipping;	/* inside an over-long line */
};

/* Looks at one complete progress line. */
static void
pull_line(struct pull_state *ps)
{
	struct vg_json_doc *doc;
	const char *msg;

	if (vg_json_parse(ps->line.data, ps->line.len, NULL, &doc, NULL) != 0)
		return;
	if ((msg = vg_json_get_str(vg_json_root(doc), "error", NULL)) != NULL)
		snprintf(ps->error, sizeof(ps->error), "%s", msg);
	vg_json_free(doc);
}

/* vg_http_sink for a pull's progress stream. */
static int
pull_sink(void *arg, const char *p, size_t n)
{
	struct pull_state *ps = arg;
	const char *nl;
	size_t k;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl ? (size_t)(nl - p) : n;
		if (!ps->skipping && ps->line.len + k <= DOCKER_PULL_LINE_MAX)
			vg_buf_add(&ps->line, p, k);
		else
			ps->skipping = 1;
		if (nl == NULL)
			break;
		if (!ps->skipping && ps->line.len > 0)
			pull_line(ps);
		vg_buf_reset(&ps->line);
		ps->skipping = 0;
		p += k + 1;
		n -= k + 1;
	}
	return 0;
}

/* Pulls image through POST /images/create. */
static int
docker_pull(struct vg_docker_conn *c, const char *image, struct vg_err *e)
{
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT, path = VG_BUF_INIT;
	struct pull_state ps = { .line = VG_BUF_INIT };
	struct vg_http_req req = {
		.method = "POST",
		.timeout = DOCKER_PULL_TIMEOUT,
		.sink = pull_sink,
		.sink_arg = &ps,
		.stop = c->stop,
	};
	char msg[512];
	int r;

	if ((r = vg_docker_image_ref(image, &from, &tag, e)) != 0)
		goto out;
	vg_buf_printf(&path, "%s/images/create?fromImage=", c->prefix);
	vg_http_escape(&path, vg_buf_str(&from));
	if (tag.len > 0) {
		vg_buf_adds(&path, "&tag=");
		vg_http_escape(&path, vg_buf_str(&tag));
	}
	req.path = vg_buf_str(&path);
	if ((r = vg_http_do(c->h, &req, &c->resp, e)) != 0) {
		vg_err_prefix(e, "docker: pulling image '%s': ", image);
		goto out;
	}
	if (ps.line.len > 0 && !ps.skipping)
		pull_line(&ps);
	if (c->resp.status >= 400) {
		snprintf(msg, sizeof(msg), "HTTP %ld", c->resp.status);
		r = vg_err_set(e, VG_EBACKEND, "docker: pulling image '%s': %s",
		    image, ps.error[0] ? ps.error : msg);
	} else if (ps.error[0] != '\0')
		r = vg_err_set(e, VG_EBACKEND, "docker: pulling image '%s': %s",
		    image, ps.error);
out:
	vg_buf_release(&from);
	vg_buf_release(&tag);
	vg_buf_release(&path);
	vg_buf_release(&ps.line);
	return r;
}

/*
 * Makes sure the image is present per pull ("missing", "always",
 * "never"); always_pull is false inside run(), where "always" already
 * happened once in prepare().
 */
int
vg_docker_ensure_image(struct vg_docker_conn *c, const struct vg_manifest *m,
    int always_pull, struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	const char *pull = vg_docker_of(m)->pull ? vg_docker_of(m)->pull : "missing";
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT;
	char *path;
	int r;

	if ((r = vg_docker_image_ref(m->image, &from, &tag, e)) != 0)
		goto out;
	if (always_pull && strcmp(pull, "always") == 0) {
		r = docker_pull(c, m->image, e);
		goto out;
	}
	path = vg_xasprintf("/images/%s/json", m->image);
	r = vg_docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, ok404,
	    "looking up the image", e);
	free(path);
	if (r != 0 || c->resp.status != 404)
		goto out;
	if (strcmp(pull, "never") == 0)
		r = vg_err_set(e, VG_ENOENT, "docker: image '%s' is not present "
		    "and docker.pull is 'never' (use 'missing' or 'always' to "
		    "pull it)", m->image);
	else
		r = docker_pull(c, m->image, e);
out:
	vg_buf_release(&from);
	vg_buf_release(&tag);
	return r;
}

/*
 * docker.c - the docker backend: runs each attempt in a container through
 * the Docker Engine API (dockerd, or podman's compatible service) over its
 * unix socket with libcurl.  No docker CLI is involved.
 *
 * One attempt is: negotiate the API version (GET /version), build the
 * create request and check it for host access (every field of it that
 * can reach the host, then GET /volumes/NAME for its named volumes,
 * judged by driver and options), make sure
 * the image is there (GET /images/NAME/json, POST /images/create), create
 * the container hardened, start it, stream its logs into the task's
 * stdout and stderr files, wait for it with the timeout, then remove it.
 * The backend implements the blocking run(); backend.c forks the monitor
 * process that calls it.  A SIGTERM or SIGINT to that process stops the
 * container and ends the attempt as CANCELLED.
 *
 * Containers carry labels naming the run, the task and the process that
 * watches them, so reap() can find and remove what a killed monitor left.
 * The policy gate decides about commands; this backend finds host access
 * (docker-access.c) in the request it is about to send (so nothing slips
 * between the manifest and the request), fails closed on what it cannot
 * tell, and asks the policy for the verdict (vg_policy_host_access).
 *
 * The parts, one job each, share backends/docker-int.h: docker-engine.c
 * (the transport), docker-body.c (the create body), docker-access.c (the
 * host-access judgement), docker-stream.c (logs and stats),
 * docker-session.c (sessions).  This file holds the backend's operations
 * (validate, prepare, run, reattach, reap), its vtable and the docker:
 * manifest section.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/json.h"
#include "common/log.h"
#include "common/path.h"
#include "runner/policy/host-access.h"
#include "backends/egress-run.h"
#include "backends/sandbox.h"
#include "backends/docker.h"
#include "runner/manifest/schema-table.h"
#include "backends/docker-int.h"

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */
/* Set by SIGTERM/SIGINT while run() waits; stops every request. */
static volatile sig_atomic_t docker_stop;

/* Reports whether the engine answers, for `vigil doctor`. */
static void
docker_probe(struct vg_buf *out)
{
	struct vg_docker_conn c;
	struct vg_err e;
	const char *ep = vg_docker_endpoint(NULL);

	vg_err_init(&e);
	if (vg_docker_open(&c, ep, NULL, &e) != 0) {
		vg_buf_printf(out, "docker: missing (%s; set DOCKER_HOST or "
		    "docker.host to the engine's socket)\n", e.msg);
		return;
	}
	vg_buf_printf(out, "docker: ok (%s, API %s)\n", ep, c.prefix + 2);
	vg_docker_close(&c);
}

/* plugin op host_check: the engine m names must answer here. */
static void
docker_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	struct vg_docker_conn c;
	struct vg_err e;
	const char *ep = vg_docker_endpoint(m);

	vg_err_init(&e);
	if (vg_docker_open(&c, ep, NULL, &e) != 0) {
		vg_strv_pushf(why, "%s (start the engine, or point "
		    "DOCKER_HOST or docker.host at its socket)", e.msg);
		return;
	}
	vg_docker_close(&c);
}

/* Checks the docker section beyond its schema. */
static int
docker_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_docker_conf *dc = vg_docker_of(m);
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT;
	struct vg_docker_mount mt;
	struct vg_docker_vol v;
	struct vg_loc loc;
	struct vg_err e;
	size_t i;
	int bad = 0;

	vg_err_init(&e);
	if (vg_docker_image_ref(m->image, &from, &tag, &e) != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "image"), "%s",
		    e.msg);
		bad = 1;
	}
	for (i = 0; i < dc->volumes.n; i++) {
		if (vg_docker_vol_parse(dc->volumes.v[i], &v, &e) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "docker.volumes[%zu]", i), "docker.volumes: %s",
			    e.msg);
			bad = 1;
		}
		vg_docker_vol_release(&v);
	}
	if (dc->pull != NULL && strcmp(dc->pull, "missing") != 0 &&
	    strcmp(dc->pull, "always") != 0 && strcmp(dc->pull, "never") != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "docker.pull"),
		    "docker.pull: '%s' is not one of missing, "
		    "always, never", dc->pull);
		bad = 1;
	}
	for (i = 0; i < dc->mounts.n; i++) {
		if (vg_docker_mount_parse(dc->mounts.v[i], &mt, &e) != 0) {
			vg_diag_add(d, &loc, "docker.mounts: %s", e.msg);
			bad = 1;
		}
		vg_docker_mount_release(&mt);
	}
	for (i = 0; i < dc->security_opt.n; i++)
		if (dc->security_opt.v[i][0] == '\0') {
			vg_diag_add(d, &loc, "docker.security_opt: an entry is "
			    "empty (expected e.g. seccomp=unconfined)");
			bad = 1;
		}
	for (i = 0; i < dc->sysctls.n; i++)
		if (dc->sysctls.v[i].key[0] == '\0' ||
		    strspn(dc->sysctls.v[i].key, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") !=
		    strlen(dc->sysctls.v[i].key)) {
			vg_diag_add(d, &loc, "docker.sysctls: '%s' is not a "
			    "kernel parameter name (such as "
			    "net.core.somaxconn)", dc->sysctls.v[i].key);
			bad = 1;
		}
	for (i = 0; i < dc->devices.n; i++)
		if (dc->devices.v[i][0] != '/') {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "docker.devices[%zu]", i), "docker.devices: '%s' "
			    "must start with the host device path (/dev/...)",
			    dc->devices.v[i]);
			bad = 1;
		}
	if (m->workdir != NULL && m->workdir[0] != '/') {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "workdir"),
		    "workdir: '%s' must be an absolute path inside the "
		    "container", m->workdir);
		bad = 1;
	}
	if (vg_isolation_net(&m->isolation) == VG_NET_ALLOW &&
	    dc->network != NULL && *dc->network != '\0' &&
	    strcmp(dc->network, "none") != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "docker.network"),
		    "docker.network '%s' with an isolation.network allow-list: "
		    "the containers join the egress proxy's network "
		    "(docs/egress.md); remove docker.network", dc->network);
		bad = 1;
	}
	vg_buf_release(&from);
	vg_buf_release(&tag);
	return bad ? VG_EINVAL : 0;
}

static struct vg_docker_drive *
docker_drive_of(struct vg_backend_drive *d)
{
	return d != NULL && d->ops == &vg_backend_docker ?
	    (struct vg_docker_drive *)d : NULL;
}

const struct vg_docker_drive *
vg_docker_egress_drive(const struct vg_attempt *a)
{
	const struct vg_docker_drive *dd = docker_drive_of(a->drive);

	return dd != NULL && dd->egress != NULL && dd->egress->pid > 0 ?
	    dd : NULL;
}

/*
 * The egress proxy of an allow-list, for containers that join its
 * network namespace: only podman's service joins one at a path
 * (NetworkMode ns:PATH), and only root makes it.  *out gets the drive.
 */
static int
egress_prepare(const struct vg_manifest *m, const struct vg_docker_conn *c,
    const char *run_dir, struct vg_backend_drive **out, struct vg_err *e)
{
	static const struct vg_egress_run none = VG_EGRESS_RUN_INIT;
	struct vg_docker_drive *dd;
	int r;

	if (!vg_host_caps()->root)
		return vg_err_set(e, VG_EUNSUPPORTED, "isolation.network: an "
		    "allow-list with backend docker needs vigil to run as "
		    "root (it makes the network namespace the containers "
		    "join; docs/egress.md)");
	if (!c->podman)
		return vg_err_set(e, VG_EUNSUPPORTED, "isolation.network: an "
		    "allow-list with backend docker needs podman's Docker "
		    "API service: its containers join the egress proxy's "
		    "network namespace (NetworkMode ns:PATH), which dockerd "
		    "does not offer (docs/egress.md); point docker.host at "
		    "podman's socket, or use network none or host");
	dd = vg_xcalloc(1, sizeof(*dd));
	dd->base.ops = &vg_backend_docker;
	dd->egress = vg_xmalloc(sizeof(*dd->egress));
	*dd->egress = none;
	if ((r = vg_egress_run_start(&m->isolation.network, run_dir,
	    dd->egress, e)) != 0) {
		free(dd->egress);
		free(dd);
		return r;
	}
	snprintf(dd->netmode, sizeof(dd->netmode), "ns:/proc/%ld/fd/%d",
	    (long)getpid(), dd->egress->nsfd);
	*out = &dd->base;
	return 0;
}

/* Once per drive: connect, pull the image per docker.pull, and start
 * the egress proxy of an allow-list (the drive's handle); each
 * attempt's monitor connects again. */
static int
docker_prepare(const struct vg_manifest *m, const char *run_dir,
    struct vg_backend_drive **out, struct vg_err *e)
{
	struct vg_docker_conn c;
	int r;

	if ((r = vg_docker_open(&c, vg_docker_endpoint(m), NULL, e)) != 0)
		return r;
	r = vg_docker_ensure_image(&c, m, 1, e);
	if (r == 0 && m->isolation.level != VG_ISO_NONE &&
	    vg_isolation_net(&m->isolation) == VG_NET_ALLOW)
		r = egress_prepare(m, &c, run_dir, out, e);
	vg_docker_close(&c);
	return r;
}

/* Ends the drive: stops its egress proxy. */
static void
docker_unprepare(struct vg_backend_drive *d)
{
	struct vg_docker_drive *dd = docker_drive_of(d);

	if (dd == NULL)
		return;
	if (dd->egress != NULL)
		vg_egress_run_stop(dd->egress);
	free(dd->egress);
	free(dd);
}

/* reuse keys: the image as written and the id the engine has for it
 * now ("python:3.12 sha256:..."), which a new push of the same tag
 * changes; "(not present)" before it was pulled. */
static int
docker_image_id(const struct vg_manifest *m, struct vg_buf *out,
    struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	struct vg_docker_conn c;
	struct vg_json_doc *doc = NULL;
	const char *id;
	char *path;
	int r;

	vg_buf_adds(out, m->image != NULL ? m->image : "-");
	if (m->image == NULL)
		return 0;
	if ((r = vg_docker_open(&c, vg_docker_endpoint(m), NULL, e)) != 0)
		return r;
	path = vg_xasprintf("/images/%s/json", m->image);
	r = vg_docker_call(&c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, ok404,
	    "looking up the image", e);
	free(path);
	if (r == 0 && c.resp.status == 404)
		vg_buf_adds(out, " (not present)");
	else if (r == 0 && (r = vg_docker_reply_json(&c, &doc, "image",
	    e)) == 0 && (id = vg_json_get_str(vg_json_root(doc), "Id",
	    NULL)) != NULL)
		vg_buf_printf(out, " %s", id);
	vg_json_free(doc);
	vg_docker_close(&c);
	return r;
}

/* Signal handler: asks run() to stop. */
static void
docker_on_signal(int sig)
{
	(void)sig;
	docker_stop = 1;
}

/* Where a container's log frames go. */
struct log_sink {
	int			fd[3];		/* [1] stdout, [2] stderr */
	unsigned long long	written[3];	/* bytes of the log seen per
						   stream, skipped ones too */
	unsigned long long	skip[3];	/* bytes to drop first */
};

/* Writes a log piece to its file, all of it, after the skipped part. */
static int
log_out(void *arg, int stream, const char *p, size_t n)
{
	struct log_sink *ls = arg;
	size_t k;

	if (ls->skip[stream] > 0) {
		k = ls->skip[stream] < n ? (size_t)ls->skip[stream] : n;
		ls->skip[stream] -= k;
		ls->written[stream] += k;
		p += k;
		n -= k;
	}
	ls->written[stream] += n;
	return vg_write_all(ls->fd[stream], p, n) != 0 ? VG_EIO : 0;
}

/*
 * After the follow stream was cut (timeout, cancel): reads the whole log
 * of the stopped container again and keeps only what had not arrived, so
 * the task's last words (a handler's message on SIGTERM) are not lost.
 * Per-stream byte counts make this independent of how frames split.
 */
static void
drain_logs(struct vg_docker_conn *c, const char *id, struct log_sink *ls)
{
	struct vg_docker_demux dm;
	struct vg_http_req req = {
		.method = "GET",
		.timeout = DOCKER_CALL_TIMEOUT,
		.sink = vg_docker_demux_sink,
		.sink_arg = &dm,
	};
	char *path = vg_xasprintf("%s/containers/%s/logs?stdout=1&stderr=1",
	    c->prefix, id);

	ls->skip[1] = ls->written[1];
	ls->skip[2] = ls->written[2];
	ls->written[1] = ls->written[2] = 0;
	vg_docker_demux_init(&dm, log_out, ls);
	req.path = path;
	(void)vg_http_do(c->h, &req, &c->resp, NULL);
	free(path);
}

/*
 * POST /containers/ID/wait for up to timeout seconds (0 = no limit).
 * Sets *code to the StatusCode; returns VG_ETIMEOUT, VG_ECANCELED or an
 * error otherwise.
 */
static int
docker_wait(struct vg_docker_conn *c, const char *id, double timeout,
    long *code, struct vg_err *e)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *err;
	char *path = vg_xasprintf("/containers/%s/wait", id);
	int r;

	r = vg_docker_call(c, "POST", path, NULL, timeout, NULL,
	    "waiting for the container", e);
	free(path);
	if (r != 0)
		return r;
	if ((r = vg_docker_reply_json(c, &doc, "container wait", e)) != 0)
		return r;
	root = vg_json_root(doc);
	err = vg_json_get(root, "Error");
	if (err != NULL && err->type == VG_JSON_OBJECT &&
	    vg_json_get_str(err, "Message", "")[0] != '\0') {
		r = vg_err_set(e, VG_EBACKEND, "docker: waiting for the "
		    "container: %s", vg_json_get_str(err, "Message", ""));
	} else if (vg_json_get(root, "StatusCode") == NULL ||
	    vg_json_get(root, "StatusCode")->type != VG_JSON_NUMBER)
		r = vg_err_set(e, VG_EBACKEND, "docker: waiting for the "
		    "container: reply has no StatusCode");
	else {
		double sc = vg_json_get_num(root, "StatusCode", -1);

		*code = sc >= -1 && sc <= 1000000 ? (long)sc : -1;
	}
	vg_json_free(doc);
	return r;
}

/* Sends sig to the container; errors are ignored (it may be gone). */
static void
docker_kill(struct vg_docker_conn *c, const char *id, const char *sig)
{
	static const long ok[] = { 404, 409, 0 };
	char *path = vg_xasprintf("/containers/%s/kill?signal=%s", id, sig);

	(void)vg_docker_call(c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, ok,
	    "signalling the container", NULL);
	free(path);
}

/* Stops the container: SIGTERM, kill_grace seconds, then SIGKILL. */
static void
docker_stop_container(struct vg_docker_conn *c, const char *id, double grace,
    int *sig)
{
	long code;

	docker_kill(c, id, "SIGTERM");
	*sig = SIGTERM;
	if (docker_wait(c, id, grace > 0 ? grace : 0.001, &code, NULL) == 0)
		return;
	docker_kill(c, id, "SIGKILL");
	*sig = SIGKILL;
	(void)docker_wait(c, id, DOCKER_CALL_TIMEOUT, &code, NULL);
}

/* Removes the container, force. */
int
vg_docker_remove(struct vg_docker_conn *c, const char *id, struct vg_err *e)
{
	static const long ok[] = { 404, 0 };
	char *path = vg_xasprintf("/containers/%s?force=1&v=1", id);
	int r;

	r = vg_docker_call(c, "DELETE", path, NULL, DOCKER_CALL_TIMEOUT, ok,
	    "removing the container", e);
	free(path);
	return r;
}

/* True when the last container the engine killed was out of memory. */
static int
docker_oom_killed(struct vg_docker_conn *c, const char *id)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *st;
	char *path = vg_xasprintf("/containers/%s/json", id);
	int oom = 0;

	if (vg_docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "inspecting the container", NULL) == 0 &&
	    vg_docker_reply_json(c, &doc, "inspect", NULL) == 0) {
		st = vg_json_get(vg_json_get(vg_json_root(doc), "State"),
		    "OOMKilled");
		oom = st != NULL && st->type == VG_JSON_BOOL && st->b;
		vg_json_free(doc);
	}
	free(path);
	return oom;
}

/*
 * Accounting.  The engine's stats describe a running container only:
 * podman 4.3 answers an exited one with an empty body, dockerd with
 * zeros.  So a thread samples GET /containers/ID/stats?stream=false
 * (one-shot: no wait for a second sample) on a connection of its own
 * while the container runs, every twentieth of the time it has run so
 * far, within [DOCKER_SAMPLE_MIN, DOCKER_SAMPLE_MAX] seconds, and keeps
 * the largest counters seen.  CPU time so misses at most what the
 * container used after the last sample.
 */
#define DOCKER_SAMPLE_MIN	0.1
#define DOCKER_SAMPLE_MAX	1.0
#define DOCKER_SAMPLE_SHARE	20.0

struct docker_sampler {
	pthread_t		 th;
	int			 on;		/* the thread runs */
	struct vg_http		*h;		/* its own connection */
	char			*path;		/* prefix + stats path */
	double			 t0;		/* vg_mono() at start */
	volatile sig_atomic_t	 done;		/* stops its request too */
	volatile sig_atomic_t	 exited;	/* stats saw the container end
						   (podman 4.3: 200 and an empty
						   body): a log stream left open
						   by the engine is ended */
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;		/* on CLOCK_MONOTONIC */
	struct vg_docker_stats	 acc;		/* under mu */
};

/* The sampling thread: one stats call, then a wait, until done. */
static void *
sampler_main(void *arg)
{
	struct docker_sampler *sp = arg;
	struct vg_http_req req = {
		.method = "GET", .path = sp->path,
		.timeout = DOCKER_CALL_TIMEOUT, .stop = &sp->done,
	};
	struct vg_http_resp resp = { 0, VG_BUF_INIT, VG_BUF_INIT };
	struct vg_docker_stats one;
	struct timespec ts;
	double wait;
	int got;

	pthread_mutex_lock(&sp->mu);
	while (!sp->done) {
		pthread_mutex_unlock(&sp->mu);
		got = vg_http_do(sp->h, &req, &resp, NULL) == 0 &&
		    resp.status == 200 && vg_docker_stats_parse(
		    resp.body.data, resp.body.len, &one, NULL) == 0;
		if (!got && (resp.status == 404 || (resp.status == 200 &&
		    resp.body.len == 0)))
			sp->exited = 1;
		pthread_mutex_lock(&sp->mu);
		if (got)
			vg_docker_stats_merge(&sp->acc, &one);
		wait = (vg_mono() - sp->t0) / DOCKER_SAMPLE_SHARE;
		wait = wait < DOCKER_SAMPLE_MIN ? DOCKER_SAMPLE_MIN :
		    wait > DOCKER_SAMPLE_MAX ? DOCKER_SAMPLE_MAX : wait;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)wait;
		ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!sp->done &&
		    pthread_cond_timedwait(&sp->cv, &sp->mu, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&sp->mu);
	vg_http_resp_release(&resp);
	return NULL;
}

/* Starts sampling container id; without a thread or a connection the
 * attempt simply goes unaccounted. */
static void
sampler_start(struct docker_sampler *sp, const char *endpoint,
    const char *prefix, const char *id)
{
	pthread_condattr_t ca;
	sigset_t block, old;

	memset(sp, 0, sizeof(*sp));
	if (vg_http_open(endpoint, &sp->h, NULL) != 0)
		return;
	sp->path = vg_xasprintf("%s/containers/%s/stats?stream=false&"
	    "one-shot=true", prefix, id);
	sp->t0 = vg_mono();
	pthread_mutex_init(&sp->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sp->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* SIGTERM and SIGINT stay the waiting thread's to take. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	sp->on = pthread_create(&sp->th, NULL, sampler_main, sp) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!sp->on) {
		pthread_cond_destroy(&sp->cv);
		pthread_mutex_destroy(&sp->mu);
	}
}

/* Stops sampling (idempotent) and hands back what was seen. */
static void
sampler_stop(struct docker_sampler *sp, struct vg_docker_stats *out)
{
	if (sp->on) {
		pthread_mutex_lock(&sp->mu);
		sp->done = 1;
		pthread_cond_signal(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
		pthread_join(sp->th, NULL);
		*out = sp->acc;
		pthread_cond_destroy(&sp->cv);
		pthread_mutex_destroy(&sp->mu);
		sp->on = 0;
	}
	vg_http_free(sp->h);
	sp->h = NULL;
	free(sp->path);
	sp->path = NULL;
}

/* Fills r's usage from what the attempt asked for and the samples. */
static void
usage_fill(const struct vg_attempt *a, const struct vg_docker_stats *st,
    struct vg_result *r)
{
	struct vg_usage *u = &r->usage;

	vg_usage_given(u, &a->res);
	if (st->known & VG_USAGE_CPU) {
		u->cpu_user = st->cpu_user;
		u->cpu_sys = st->cpu_sys;
		u->known |= VG_USAGE_CPU;
	}
	if (st->known & VG_USAGE_RSS) {
		u->max_rss = st->mem;
		u->known |= VG_USAGE_RSS;
	}
}

/* A container name from the run, task and attempt: [A-Za-z0-9_.-]. */
char *
vg_docker_container_name(const struct vg_attempt *a)
{
	char *s = vg_xasprintf("vigil-%s-%d-%d", a->run_id ? a->run_id : "x",
	    a->task ? a->task->index : 0, a->attempt), *p;

	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		    *p == '-'))
			*p = '_';
	return s;
}

/* Creates the container from body (replacing a leftover of the same
 * name). */
int
vg_docker_create(struct vg_docker_conn *c, const struct vg_attempt *a,
    const struct vg_buf *body, char **idp, struct vg_err *e)
{
	static const long ok409[] = { 409, 0 };
	struct vg_json_doc *doc = NULL;
	char *name, *path;
	const char *id;
	int r, tries;

	*idp = NULL;
	name = vg_docker_container_name(a);
	path = vg_xasprintf("/containers/create?name=%s", name);
	for (tries = 0; tries < 2; tries++) {
		if ((r = vg_docker_call(c, "POST", path, body,
		    DOCKER_CALL_TIMEOUT, ok409, "creating the container",
		    e)) != 0)
			goto out;
		if (c->resp.status != 409)
			break;
		/* A container of an earlier, killed monitor of this very
		 * attempt: it is ours to replace. */
		if ((r = vg_docker_remove(c, name, e)) != 0)
			goto out;
	}
	if (c->resp.status == 409) {
		r = vg_err_set(e, VG_EBACKEND, "docker: creating the container: "
		    "name '%s' is still in use", name);
		goto out;
	}
	if ((r = vg_docker_reply_json(c, &doc, "creating the container",
	    e)) != 0)
		goto out;
	if ((id = vg_json_get_str(vg_json_root(doc), "Id", NULL)) == NULL ||
	    *id == '\0' || strspn(id, "0123456789abcdef") != strlen(id)) {
		r = vg_err_set(e, VG_EBACKEND, "docker: creating the container: "
		    "reply has no valid \"Id\"");
		goto out;
	}
	*idp = vg_xstrdup(id);
out:
	vg_json_free(doc);
	free(name);
	free(path);
	return r;
}

/*
 * The checks before create: host access, judged on body (the create
 * request that will be sent) and the engine's view of its named volumes,
 * then the image.  Returns 0 to go on; 1 with r filled as DENIED.
 */
int
vg_docker_precheck(struct vg_docker_conn *c, const struct vg_attempt *a,
    const struct vg_buf *body, struct vg_result *r, struct vg_err *e)
{
	struct vg_buf why = VG_BUF_INIT;
	struct vg_docker_named nv = { VG_STRV_INIT, VG_STRV_INIT };
	struct vg_host_site site;
	struct vg_host_verdict hv;
	int rc;

	if ((rc = vg_policy_host_site(&a->m->policy, &site, e)) != 0)
		return vg_err_prefix(e, "docker: ");
	(void)vg_docker_host_access(a, vg_buf_str(body), body->len, &site,
	    &why, &nv);
	if ((rc = vg_docker_named_volume_findings(c, &nv, &site, &why, e)) < 0)
		goto out;
	vg_policy_host_access(&a->m->policy, vg_buf_str(&why), NULL, &hv);
	if (!hv.allowed) {
		r->state = VG_ST_DENIED;
		/* The precision keeps the reason to what r->reason holds. */
		snprintf(r->reason, sizeof(r->reason), "host access refused: "
		    "%.*s", (int)(sizeof(r->reason) -
		    sizeof("host access refused: ")), hv.reason);
		vg_err_set(e, VG_EDENIED, "host access refused: %s", hv.reason);
		rc = 1;
		goto out;
	}
	rc = vg_docker_ensure_image(c, a->m, 0, e);
out:
	vg_docker_named_release(&nv);
	vg_policy_host_site_release(&site);
	vg_buf_release(&why);
	return rc;
}

/* How often a dropped log stream is picked up again within an attempt,
 * and the first pause before that (doubling). */
#define DOCKER_STREAM_TRIES	5
#define DOCKER_STREAM_BACKOFF	0.2

/* Sleeps secs unless a stop request comes; -1 then. */
static int
docker_nap(double secs)
{
	struct timespec ts;

	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (!docker_stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return docker_stop ? -1 : 0;
}

/*
 * Streams the logs of running container id into ls until it ends, then
 * waits for its status, honouring a->timeout and stop requests; fills r.
 * A log stream that drops (the engine restarted its API, a reset
 * socket) is read again from its start with what arrived skipped, up to
 * DOCKER_STREAM_TRIES times with backoff.  The caller removes the
 * container.
 */
static int
docker_follow(struct vg_docker_conn *c, struct vg_attempt *a, const char *id,
    struct log_sink *ls, struct vg_result *r, struct vg_err *e)
{
	struct vg_docker_demux dm;
	struct docker_sampler smp = { .on = 0 };
	struct vg_docker_stats stats = { .known = 0 };
	struct vg_http_req req = { .method = "GET" };
	struct vg_err le;
	double deadline = 0, pause = DOCKER_STREAM_BACKOFF;
	char *path;
	long code = -1;
	int rc, timed_out = 0, cancelled = 0, sig = 0, cut = 0, tries;

	if (a->timeout > 0)
		deadline = vg_mono() + a->timeout;
	sampler_start(&smp, vg_docker_endpoint(a->m), c->prefix, id);

	/* The log stream ends when the container does. */
	path = vg_xasprintf("%s/containers/%s/logs?follow=1&stdout=1&stderr=1",
	    c->prefix, id);
	req.path = path;
	req.sink = vg_docker_demux_sink;
	req.sink_arg = &dm;
	req.stop = &docker_stop;
	req.stop2 = &smp.exited;
	for (tries = 1;; tries++) {
		vg_docker_demux_init(&dm, log_out, ls);
		req.timeout = vg_time_left(deadline, 0.001);
		vg_err_init(&le);
		rc = vg_http_do(c->h, &req, &c->resp, &le);
		if (rc != 0 && dm.err.rc != 0) {
			/* Our side stopped it: said as such, not retried. */
			rc = vg_err_set(&le, dm.err.rc, "docker: log stream "
			    "of %.12s: %s", id, dm.err.msg);
			break;
		}
		if (rc != VG_EIO || tries >= DOCKER_STREAM_TRIES)
			break;
		/* Dropped: read it again from the start, skipping what is
		 * in the files already. */
		vg_warn("docker: log stream of %.12s dropped (%s); reading "
		    "it again", id, le.msg);
		if (docker_nap(pause) != 0) {
			rc = VG_ECANCELED;
			break;
		}
		pause *= 2;
		ls->skip[1] = ls->written[1];
		ls->skip[2] = ls->written[2];
		ls->written[1] = ls->written[2] = 0;
	}
	free(path);
	if (rc == VG_ETIMEOUT)
		timed_out = 1;
	else if (rc == VG_ECANCELED && docker_stop)
		cancelled = 1;
	else if (rc == VG_ECANCELED && smp.exited) {
		/* The container ended but the engine kept its log stream
		 * open (seen with podman 4.3 on very short tasks): the rest of
		 * the logs is read once the wait below has seen the end. */
		rc = 0;
		cut = 1;
	}
	else if (rc != 0) {
		/* Output trouble must not leave the container running;
		 * record it and still wait for the task's status. */
		vg_err_set(e, rc, "%s", le.msg);
	}
	if (!timed_out && !cancelled) {
		rc = docker_wait(c, id, vg_time_left(deadline, 0.001), &code,
		    &le);
		if (rc == VG_ETIMEOUT)
			timed_out = 1;
		else if (rc == VG_ECANCELED)
			cancelled = 1;
		else if (rc != 0) {
			sampler_stop(&smp, &stats);
			vg_err_set(e, rc, "%s", le.msg);
			return vg_result_fail(r, e);
		}
	}
	if (cut)
		drain_logs(c, id, ls);
	sampler_stop(&smp, &stats);
	usage_fill(a, &stats, r);
	if (timed_out || cancelled) {
		/* A stop request must not stop the stopping. */
		c->stop = NULL;
		docker_stop_container(c, id, a->kill_grace, &sig);
		drain_logs(c, id, ls);
		r->signal = sig;
		r->exit_code = -1;
		r->state = timed_out ? VG_ST_TIMEOUT : VG_ST_CANCELLED;
		snprintf(r->reason, sizeof(r->reason), "%s after %.1f s; "
		    "container stopped with %s", timed_out ? "timed out" :
		    "cancelled", vg_now() - r->started, sig == SIGKILL ?
		    "SIGKILL" : "SIGTERM");
	} else if (code == 0) {
		r->state = VG_ST_SUCCEEDED;
		r->exit_code = 0;
	} else {
		r->exit_code = (int)code;
		if (code == 128 + SIGKILL && docker_oom_killed(c, id)) {
			r->state = VG_ST_OOM;
			snprintf(r->reason, sizeof(r->reason), "out of memory: "
			    "killed by the kernel at the %llu-byte limit",
			    (unsigned long long)a->res.memory);
		} else {
			r->state = VG_ST_FAILED;
			snprintf(r->reason, sizeof(r->reason), "exit code %ld",
			    code);
		}
	}
	r->ended = vg_now();
	if (e->rc != 0 && r->state == VG_ST_SUCCEEDED) {
		/* The task succeeded but its output was not all kept. */
		return vg_result_fail(r, e);
	}
	return 0;
}

/* Removes container id at the end of an attempt; a failure is noted in
 * r's reason. */
static void
docker_finish_container(struct vg_docker_conn *c, const char *id,
    struct vg_result *r)
{
	struct vg_err le;

	c->stop = NULL;
	vg_err_init(&le);
	if (vg_docker_remove(c, id, &le) != 0)
		snprintf(r->reason + strlen(r->reason), sizeof(r->reason) -
		    strlen(r->reason), "%s(container %.12s not removed: %s)",
		    r->reason[0] ? " " : "", id, le.msg);
}

/* Installs the stop handler for SIGTERM and SIGINT, saving the old. */
static void
docker_signals(struct sigaction *old_term, struct sigaction *old_int)
{
	struct sigaction sa;

	docker_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = docker_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, old_term);
	sigaction(SIGINT, &sa, old_int);
}

/* Starts r as BACKEND_ERROR until known and connects c to the engine;
 * r says why when that fails. */
static int
docker_begin(struct vg_docker_conn *c, const struct vg_attempt *a,
    struct vg_result *r, struct vg_err *e)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	gethostname(r->node, sizeof(r->node) - 1);
	if ((rc = vg_docker_open(c, vg_docker_endpoint(a->m), &docker_stop,
	    e)) != 0)
		vg_result_fail(r, e);
	return rc;
}

/*
 * Runs one attempt to completion; see backend.h.  Returns 0 with r
 * filled for every outcome of the task (including DENIED, TIMEOUT and
 * CANCELLED), or a negative vg_rc with r set to BACKEND_ERROR and e
 * saying why.
 */
static int
docker_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct vg_docker_conn c;
	struct log_sink ls = { .fd = { -1, -1, -1 } };
	struct vg_buf body = VG_BUF_INIT;
	char *id = NULL, *path = NULL, owner[320];
	int rc;

	docker_signals(&old_term, &old_int);
	if ((rc = docker_begin(&c, a, r, e)) != 0)
		goto restore;
	vg_backend_owner_label(owner, sizeof(owner));
	vg_docker_create_body(a, owner, &body);
	if ((rc = vg_docker_precheck(&c, a, &body, r, e)) != 0) {
		if (rc == 1) {
			rc = 0;		/* DENIED is an outcome */
		} else {
			vg_result_fail(r, e);
			/* A missing image (the engine's 404) will not
			 * appear by trying again. */
			if (rc == VG_ENOENT)
				r->cause = VG_CAUSE_PERMANENT;
		}
		goto close;
	}
	if ((ls.fd[1] = vg_task_output_open(a->task_dir, 0, "stdout",
	    0, e)) < 0 ||
	    (ls.fd[2] = vg_task_output_open(a->task_dir, 0, "stderr",
	    0, e)) < 0) {
		rc = vg_result_fail(r, e);
		goto close;
	}
	if ((rc = vg_docker_create(&c, a, &body, &id, e)) != 0) {
		vg_result_fail(r, e);
		goto close;
	}
	/* Before it starts: its connections' records name the task. */
	if (vg_docker_egress_drive(a) != NULL)
		vg_egress_run_container(vg_docker_egress_drive(a)->egress, id,
		    a->task != NULL ? a->task->index : -1, a->attempt);
	path = vg_xasprintf("/containers/%s/start", id);
	rc = vg_docker_call(&c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "starting the container", e);
	free(path);
	if (rc != 0)
		vg_result_fail(r, e);
	else {
		r->started = vg_now();
		rc = docker_follow(&c, a, id, &ls, r, e);
	}
	docker_finish_container(&c, id, r);
close:
	if (ls.fd[1] >= 0)
		close(ls.fd[1]);
	if (ls.fd[2] >= 0)
		close(ls.fd[2]);
	free(id);
	vg_buf_release(&body);
	vg_docker_close(&c);
restore:
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
	return rc;
}

/*
 * Takes over the container of attempt a after vigil and its monitor
 * died; see backend.h.  The container is found by its name (run, task
 * and attempt, as vg_docker_create named it); its logs are read from the
 * start with what the task files hold skipped, then it is waited for
 * and removed like in run.
 */
static int
docker_reattach(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct vg_docker_conn c;
	struct log_sink ls = { .fd = { -1, -1, -1 } };
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *st;
	char *name = vg_docker_container_name(a), *path, *id = NULL;
	struct stat sb;
	int rc, i;

	docker_signals(&old_term, &old_int);
	if ((rc = docker_begin(&c, a, r, e)) != 0)
		goto restore;
	path = vg_xasprintf("/containers/%s/json", name);
	rc = vg_docker_call(&c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "inspecting the container", e);
	free(path);
	if (rc == VG_ENOENT) {
		rc = vg_err_set(e, VG_ENOENT, "docker: no container '%s' was "
		    "left", name);
		goto close;
	}
	if (rc != 0 ||
	    (rc = vg_docker_reply_json(&c, &doc, "inspect", e)) != 0) {
		vg_result_fail(r, e);
		goto close;
	}
	id = vg_xstrdup(vg_json_get_str(vg_json_root(doc), "Id", name));
	st = vg_json_get(vg_json_root(doc), "State");
	if (strcmp(vg_json_get_str(st, "Status", ""), "created") == 0) {
		/* Never started: nothing ran; remove it, run again. */
		docker_finish_container(&c, id, r);
		rc = vg_err_set(e, VG_ENOENT, "docker: container '%s' was "
		    "created but never started; removed", name);
		goto close;
	}
	if ((ls.fd[1] = vg_task_output_reopen(a->task_dir, 0, "stdout",
	    e)) < 0 ||
	    (ls.fd[2] = vg_task_output_reopen(a->task_dir, 0, "stderr",
	    e)) < 0) {
		rc = vg_result_fail(r, e);
		docker_finish_container(&c, id, r);
		goto close;
	}
	/* What the files hold already is skipped in the log. */
	for (i = 1; i <= 2; i++)
		if (fstat(ls.fd[i], &sb) == 0)
			ls.skip[i] = (unsigned long long)sb.st_size;
	r->started = vg_now();
	rc = docker_follow(&c, a, id, &ls, r, e);
	docker_finish_container(&c, id, r);
close:
	if (ls.fd[1] >= 0)
		close(ls.fd[1]);
	if (ls.fd[2] >= 0)
		close(ls.fd[2]);
	vg_json_free(doc);
	free(id);
	free(name);
	vg_docker_close(&c);
restore:
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
	return rc;
}

/*
 * Removes vigil's containers: every one of run_id (of task `task` when
 * >= 0), or (run_id NULL) those whose owner label names a process of
 * this host that no longer exists; then an engine that cannot be reached
 * has none.
 */
static int
docker_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	struct vg_buf path = VG_BUF_INIT, filt = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_docker_conn c;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *list, *ct, *labels;
	const char *id, *owner;
	char *label;
	size_t i;
	int rc;

	if ((rc = vg_docker_open(&c, vg_docker_endpoint(m), NULL, e)) != 0)
		/* Sweeping for dead owners (gc) where no engine answers:
		 * nothing here that vigil could have made. */
		return rc == VG_EIO && run_id == NULL ? 0 : rc;
	vg_json_writer_init(&w, &filt);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "label");
	vg_json_arr_begin(&w);
	vg_json_str(&w, VG_DOCKER_LABEL "=1");
	if (run_id != NULL) {
		label = vg_xasprintf("%s=%s", VG_DOCKER_LABEL_RUN, run_id);
		vg_json_str(&w, label);
		free(label);
	}
	if (run_id != NULL && task >= 0) {
		label = vg_xasprintf("%s=%d", VG_DOCKER_LABEL_TASK, task);
		vg_json_str(&w, label);
		free(label);
	}
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
	vg_buf_adds(&path, "/containers/json?all=1&filters=");
	vg_http_escape(&path, vg_buf_str(&filt));
	if ((rc = vg_docker_call(&c, "GET", vg_buf_str(&path), NULL,
	    DOCKER_CALL_TIMEOUT, NULL, "listing containers", e)) != 0 ||
	    (rc = vg_docker_reply_json(&c, &doc, "listing containers", e)) != 0)
		goto out;
	list = vg_json_root(doc);
	if (list->type != VG_JSON_ARRAY) {
		rc = vg_err_set(e, VG_EBACKEND, "docker: listing containers: "
		    "reply is not an array");
		goto out;
	}
	for (i = 0; i < list->len; i++) {
		ct = list->items[i];
		labels = vg_json_get(ct, "Labels");
		id = vg_json_get_str(ct, "Id", NULL);
		owner = vg_json_get_str(labels, VG_DOCKER_LABEL_OWNER, NULL);
		if (id == NULL || strcmp(vg_json_get_str(labels,
		    VG_DOCKER_LABEL, ""), "1") != 0)
			continue;
		if (run_id != NULL && strcmp(vg_json_get_str(labels,
		    VG_DOCKER_LABEL_RUN, ""), run_id) != 0)
			continue;
		if (run_id != NULL && task >= 0 && atoi(vg_json_get_str(labels,
		    VG_DOCKER_LABEL_TASK, "-1")) != task)
			continue;
		if (run_id == NULL && !vg_backend_owner_dead(owner))
			continue;
		if ((rc = vg_docker_remove(&c, id, e)) != 0)
			goto out;
		if (report != NULL)
			vg_buf_printf(report, "docker: removed container %.12s "
			    "(run %s, task %s)\n", id, vg_json_get_str(labels,
			    VG_DOCKER_LABEL_RUN, "?"), vg_json_get_str(labels,
			    VG_DOCKER_LABEL_TASK, "?"));
	}
out:
	vg_json_free(doc);
	vg_buf_release(&path);
	vg_buf_release(&filt);
	vg_docker_close(&c);
	return rc;
}

static const struct vg_msection *const docker_sections[] = {
	&vg_docker_msection, NULL
};

const struct vg_backend_ops vg_backend_docker = {
	.caps = VG_BCAP_STDIN_STREAM,
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "docker",
		.flags = VG_PLUGIN_IMAGE | VG_PLUGIN_NONET | VG_PLUGIN_EGRESS |
		    VG_PLUGIN_EGRESS_RUNS,
		.help = "a container through the Docker Engine API",
		.sections = docker_sections,
		.validate = docker_validate,
		.host_check = docker_host_check,
	},
	.probe = docker_probe,
	.prepare = docker_prepare,
	.unprepare = docker_unprepare,
	.image_id = docker_image_id,
	.run = docker_run,
	.reap = docker_reap,
	/* Sessions: the block above. */
	.session_open = vg_docker_session_open,
	.session_exec = vg_docker_session_exec,
	.session_close = vg_docker_session_close,
	.reattach = docker_reattach,
};

/* ---- the docker: section ---- */

/* docker.volumes: "src:dst[:ro|rw]". */
static void
check_volumes(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	vg_schema_check_mounts(n, p, c, 1);
}

static const char *const pull_names[] = { "missing", "always", "never",
	NULL };

static const struct vg_section docker_section = {
	.name = "docker",
	.fields = (const struct vg_field[]){
		STR(vg_docker_conf, "host", host, "DOCKER_HOST override"),
		{ .key = "volumes", .type = VG_F_STRV,
		  .off = OFF(vg_docker_conf, volumes), .check = check_volumes,
		  .help = "SOURCE:/DEST[:ro] mounts" },
		STRDEF(vg_docker_conf, "network", network, "none",
		    "container network"),
		BOOL(vg_docker_conf, "read_only", read_only, "false",
		    "read-only root file system"),
		STR(vg_docker_conf, "user", user, "user inside"),
		STRV(vg_docker_conf, "cap_add", cap_add, "capabilities"),
		STRV(vg_docker_conf, "devices", devices, "devices"),
		BOOL(vg_docker_conf, "privileged", privileged, "false",
		    "privileged container"),
		STR(vg_docker_conf, "pid_mode", pid_mode, "PID namespace"),
		STR(vg_docker_conf, "ipc_mode", ipc_mode, "IPC namespace"),
		CHOICE(vg_docker_conf, "pull", pull, "missing", pull_names,
		    "when to pull the image"),
		U64(vg_docker_conf, "pids_limit", pids_limit, 1, BIG,
		    "process limit"),
		STRV(vg_docker_conf, "mounts", mounts,
		    "type=bind|volume|tmpfs,source=..,target=.. mounts"),
		STRV(vg_docker_conf, "security_opt", security_opt,
		    "security options added to no-new-privileges"),
		{ .key = "sysctls", .type = VG_F_KVS,
		  .off = OFF(vg_docker_conf, sysctls),
		  .help = "kernel parameters (name: value)" },
		STR(vg_docker_conf, "uts_mode", uts_mode, "UTS namespace"),
		STR(vg_docker_conf, "userns_mode", userns_mode,
		    "user namespace"),
		STRV(vg_docker_conf, "volumes_from", volumes_from,
		    "containers whose mounts to take"),
		STRV(vg_docker_conf, "device_cgroup_rules", device_cgroup_rules,
		    "device cgroup rules (c 1:3 mr)"),
		{ .key = NULL },
	},
};

const struct vg_msection vg_docker_msection = {
	.key = "docker",
	.schema = &docker_section,
	.size = sizeof(struct vg_docker_conf),
	.help = "docker backend",
};
